// The one main of test_examples: the examples (examples/) through their
// interfaces. "--device gpu" before Boost.Test's own arguments runs every
// case on the GPU (and the CPU-GPU agreement cases); without a CUDA device
// it returns 77, which CTest (SKIP_RETURN_CODE) reports as skipped. The
// default is --device cpu.
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/unit_test.hpp>

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <recur/executor.hpp>

#include "common/examples_device.hpp"

namespace recur_test {
recur_examples::backend examples_backend = recur_examples::backend::cpu;
}

namespace {

bool init_unit_test() {
  boost::unit_test::framework::master_test_suite().p_name.value = "recur_examples";
  return true;
}

}  // namespace

int main(int argc, char* argv[]) {
  std::vector<char*> args(argv, argv + argc);
  std::string device = "cpu";
  if (args.size() >= 3 && std::string_view(args[1]) == "--device") {
    device = args[2];
    args.erase(args.begin() + 1, args.begin() + 3);
  }
  if (device != "cpu" && device != "gpu") {
    std::fprintf(stderr, "test_examples: --device must be cpu or gpu, not '%s'\n", device.c_str());
    return 2;
  }
  if (device == "gpu") {
    if (recur::cuda_device_count() == 0) {
      std::printf("test_examples --device gpu: %s: skipped\n", recur::cuda_device_description().c_str());
      return 77;
    }
    recur_test::examples_backend = recur_examples::backend::gpu;
  }
  return boost::unit_test::unit_test_main(&init_unit_test, static_cast<int>(args.size()), args.data());
}
