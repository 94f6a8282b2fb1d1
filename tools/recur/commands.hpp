#pragma once
// The recur program's commands, one file each (or one per family): main.cpp
// holds the table of them.
#include "cli.hpp"

namespace recur_cli {

extern command const demo_command;     // demo.cpp
extern command const linrec_command;   // linrec.cpp
extern command const filter_command;   // filter.cpp
extern command const sosfilt_command;  // filter.cpp
extern command const dpcm_command;     // dpcm.cpp
extern command const tridiag_command;  // tridiag.cpp
extern command const poisson_command;  // poisson.cpp
extern command const heat_command;     // heat.cpp

}  // namespace recur_cli
