// recur::dist's NCCL path under MPI, one GPU a rank (NCCL refuses two ranks
// on one GPU: with fewer GPUs than ranks the suite reports itself skipped).
// recur::dist::linrec with comm.nccl against the sequential reference and,
// bitwise, against the same call through MPI (the same summaries and the
// same fold, on the device instead of the host): forward and reverse,
// initial and final states, uneven splits and empty ranks, batches; and
// the ranks' agreement on whether NCCL is used.
#define BOOST_TEST_MODULE recur_dist_nccl
#define BOOST_TEST_NO_MAIN
#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <boost/test/unit_test.hpp>
#include <recur/dist.hpp>
#include <recur/error.hpp>
#include <recur/reference/linrec.hpp>

#include "common/dist_split.hpp"
#include "common/either_memory.hpp"

namespace {

using recur::direction;
using recur::layout;
using recur_test::dist_cuda;
using recur_test::split;
using recur_test::world;

// The NCCL communicator over MPI_COMM_WORLD, made once where every rank has
// a GPU of its own.
ncclComm_t nccl_world = nullptr;

boost::test_tools::assertion_result nccl_available(boost::unit_test::test_unit_id) {
  if (nccl_world) return true;
  boost::test_tools::assertion_result r(false);
  r.message() << "fewer GPUs than ranks (NCCL needs one GPU a rank)";
  return r;
}

template <class T>
void check(std::int64_t n, std::int64_t count, split how, direction dir, bool init_array) {
  world const me;
  dist_cuda mem;
  std::mt19937 gen(static_cast<unsigned>(n * 31 + count * 7 + int(how) * 3 + int(dir)));
  std::uniform_real_distribution<double> us(-0.95, 0.95), ut(-1.0, 1.0);
  layout const global = layout::contiguous(n, count);
  std::vector<T> s(n * count), t(n * count), init(count);
  for (auto& v : s) v = T(us(gen));
  for (auto& v : t) v = T(ut(gen));
  for (auto& v : init) v = T(ut(gen));
  std::vector<T> ref(n * count), ref_final(count);
  recur::reference::linrec<T>(s.data(), T(0), t.data(), T(0), ref.data(), global,
                              init_array ? init.data() : nullptr, T(0.25), ref_final.data(),
                              dir == direction::reverse);

  auto const slice = recur_test::slice_of(how, n, count, false);
  std::int64_t const first = slice.first, nr = slice.lay.n;
  layout const lay = slice.lay;
  std::vector<T> const ls = recur_test::take(slice, s, global), lt = recur_test::take(slice, t, global);
  auto ds = mem.upload(ls), dt = mem.upload(lt), dinit = mem.upload(init);
  // The NCCL path, then the MPI path, each into its own w and final state.
  std::vector<T> w[2], fin[2];
  for (int path = 0; path < 2; ++path) {
    auto dw = mem.upload(std::vector<T>(nr * count, T(-7)));
    auto dfinal = mem.upload(std::vector<T>(count, T(-7)));
    recur::linrec_options<T> opt;
    opt.dir = dir;
    opt.init = init_array ? mem.cptr(dinit) : nullptr;
    opt.init_value = T(0.25);
    opt.final_state = mem.ptr(dfinal);
    recur::dist::communicator const comm{MPI_COMM_WORLD, path == 0 ? nccl_world : nullptr};
    recur::dist::linrec<T>(comm, mem.executor(), mem.cptr(ds), mem.cptr(dt), mem.ptr(dw), lay, opt);
    w[path] = mem.download(dw, nr * count);
    fin[path] = mem.download(dfinal, count);
  }
  double const tol = std::is_same_v<T, double> ? 1e-12 : 2e-5;
  std::string bad;
  for (std::int64_t k = 0; k < count && bad.empty(); ++k)
    for (std::int64_t i = 0; i < nr; ++i) {
      double const want = ref[global.offset(first + i, k)], got = w[0][lay.offset(i, k)];
      if (!(std::abs(got - want) <= tol * (1 + std::abs(want)))) {
        bad = "w[" + std::to_string(first + i) + "] of sequence " + std::to_string(k) + ": " +
              std::to_string(got) + " against " + std::to_string(want);
        break;
      }
    }
  for (std::int64_t k = 0; k < count && bad.empty(); ++k)
    if (!(std::abs(fin[0][k] - ref_final[k]) <= tol * (1 + std::abs(ref_final[k]))))
      bad = "final state of sequence " + std::to_string(k);
  BOOST_TEST(bad.empty(), "rank " << me.rank << "/" << me.size << " n=" << n << " count=" << count << " "
                                  << recur_test::name(how) << (dir == direction::reverse ? " reverse" : "")
                                  << (init_array ? " init array" : "") << ": " << bad);
  BOOST_TEST(
      (w[0] == w[1] && fin[0] == fin[1]),
      "rank " << me.rank << ": the NCCL path differs from the MPI path, n=" << n << " count=" << count);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(dist_linrec_nccl, *boost::unit_test::precondition(nccl_available))

BOOST_AUTO_TEST_CASE(matches_reference_and_mpi_path) {
  for (split how : {split::even, split::uneven, split::empty_ranks})
    for (direction dir : {direction::forward, direction::reverse})
      for (auto [n, count] :
           {std::pair<std::int64_t, std::int64_t>{1, 1}, {1000, 1}, {300001, 1}, {4096, 300}})
        for (bool init_array : {false, true}) {
          check<float>(n, count, how, dir, init_array);
          check<double>(n, count, how, dir, init_array);
        }
}

// Ranks that disagree on whether NCCL is used get the same error.
BOOST_AUTO_TEST_CASE(ranks_agree_on_the_path) {
  world const me;
  if (me.size < 2) return;
  dist_cuda mem;
  auto dt = mem.upload(std::vector<float>(100, 1.0f)), dw = mem.upload(std::vector<float>(100, 0.0f));
  recur_test::expect_same_error<recur::invalid_argument>(
      [&] {
        recur::dist::communicator const comm{MPI_COMM_WORLD, me.rank == 0 ? nccl_world : nullptr};
        recur::dist::linrec<float>(comm, mem.executor(), 0.5f, mem.cptr(dt), mem.ptr(dw), 100);
      },
      "the ranks disagree on whether comm.nccl is given");
}

BOOST_AUTO_TEST_SUITE_END()

// MPI and NCCL around Boost.Test; the exit status is the worst rank's.
int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1, devices = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (cudaGetDeviceCount(&devices) != cudaSuccess) devices = 0;
  int ok = devices >= size ? 1 : 0, all = 0;
  MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (all) {
    cudaSetDevice(rank);
    ncclUniqueId id;
    if (rank == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    if (ncclCommInitRank(&nccl_world, size, id, rank) != ncclSuccess) nccl_world = nullptr;
  }
  int rc = boost::unit_test::unit_test_main(&init_unit_test, argc, argv);
  int worst = rc;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (nccl_world) ncclCommDestroy(nccl_world);
  MPI_Finalize();
  return worst;
}
