// The one main of test_examples: the examples (examples/) through their
// interfaces, every case on the device that "--device cpu|gpu" names
// (common/device_main.hpp; the GPU-only cases run with gpu).
#define BOOST_TEST_NO_MAIN
#define BOOST_TEST_ALTERNATIVE_INIT_API
#include <boost/test/unit_test.hpp>

#include "common/device_main.hpp"
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
  return recur_test::device_test_main(argc, argv, "test_examples", &init_unit_test, [](bool gpu) {
    recur_test::examples_backend = gpu ? recur_examples::backend::gpu : recur_examples::backend::cpu;
  });
}
