#pragma once
// The main of a test program whose cases run on the device that
// "--device cpu|gpu" names before Boost.Test's own arguments (default cpu):
// select(gpu) tells the cases which, before they run. gpu without a CUDA
// device returns 77, which CTest (SKIP_RETURN_CODE) reports as skipped;
// another name returns 2. The program defines BOOST_TEST_NO_MAIN and
// BOOST_TEST_ALTERNATIVE_INIT_API before including Boost.Test.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <boost/test/unit_test.hpp>

#include <recur/executor.hpp>

namespace recur_test {

inline int device_test_main(int argc, char* argv[], char const* program, bool (*init)(),
                            void (*select)(bool gpu)) {
  std::vector<char*> args(argv, argv + argc);
  std::string device = "cpu";
  if (args.size() >= 3 && std::string_view(args[1]) == "--device") {
    device = args[2];
    args.erase(args.begin() + 1, args.begin() + 3);
  }
  if (device != "cpu" && device != "gpu") {
    std::fprintf(stderr, "%s: --device must be cpu or gpu, not '%s'\n", program, device.c_str());
    return 2;
  }
  if (device == "gpu" && recur::cuda_device_count() == 0) {
    std::printf("%s --device gpu: %s: skipped\n", program, recur::cuda_device_description().c_str());
    return 77;
  }
  select(device == "gpu");
  return boost::unit_test::unit_test_main(init, static_cast<int>(args.size()), args.data());
}

}  // namespace recur_test
