// recur::dist's scaling, run under mpirun (one rank per GPU, or ranks on
// the CPU with --executor host), written by rank 0 as Google-Benchmark-style
// JSON. For --facility linrec (recur::dist::linrec), tridiag
// (recur::dist::solve_batched, diagonally dominant systems) or lfilter
// (recur::dist::lfilter, a second-order low-pass) on one sequence
// or system (or --count of them) of --n elements a rank (weak) and of --n
// elements in all (strong):
//
//   dist_<facility>_<type>_<weak|strong>/ranks:P/n:N   the split call on every rank
//   dist_<facility>_<type>_<weak|strong>/ranks:1/n:N   the one-device call (recur::linrec,
//                                                       recur::solve_batched, recur::lfilter) on rank 0
//                                                       alone, the others idle
//   dist_<facility>_<type>_split/ranks:1/n:N           the split call on rank 0 alone
//                                                       (MPI_COMM_SELF): the split's own cost
//   dist_copy_<type>/ranks:P/n:N                        each rank copying its slice
//                                                       (the copy ceiling a rank)
//   dist_allgather/ranks:P/bytes:B                      MPI_Allgather of B bytes a rank (8 B,
//                                                       4 KiB, 64 KiB, 1 MiB): the cost model's
//   dist_collectives/ranks:P/bytes:A+S                  the split call's two all-gathers (the
//                                                       agreement's A bytes, the summaries' S),
//                                                       with the model's prediction (model_us,
//                                                       model_error_pct)
// (each name followed by /count:C where --count is above 1; the P-rank
// entries by /nccl with --nccl 1: linrec through NCCL, one GPU a rank).
//
// Each time is the median over --reps of the slowest rank's time (a barrier
// before each repetition, after warm-up; CUDA events on the GPU, the
// stream synchronised). Counters: pct_of_copy, the aggregate bandwidth
// (the one-device call's traffic: linrec 3 words an element, s and t read
// and w written; tridiag 5, a, b, c and d read and x written; lfilter 2, x
// read and y written) against P
// times the copy ceiling measured in the same run;
// efficiency, weak: the one-rank time over the P-rank time, strong: the
// one-rank time of the whole sequence over P times the P-rank time.
//
//   mpirun -np 4 build/bench/bench_dist --executor cuda --n 268435456 --out bench/results/h100x4-dist.json
//   mpirun -np 4 build/bench/bench_dist --facility tridiag --n 16384 --count 4096
//
// Ranks sharing one GPU measure the algorithm's overheads, not scaling.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <mpi.h>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <recur/dist.hpp>
#include <recur/filter.hpp>
#include <recur/linrec.hpp>
#include <recur/tridiag.hpp>

#if RECUR_HAS_NCCL
#include <nccl.h>
#endif

namespace {

struct options {
  bool gpu = true;
  std::string facility = "linrec";  // --facility linrec, tridiag or lfilter
  std::int64_t n = std::int64_t(1) << 24;
  std::int64_t count = 1;
  bool f64 = false;
  int reps = 20;
  std::string out;
  bool nccl = false;              // --nccl 1: linrec's split calls through NCCL (cuda, one GPU a rank)
  ncclComm* nccl_comm = nullptr;  // made in main
};

void check(cudaError_t e, char const* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "bench_dist: %s: %s\n", what, cudaGetErrorString(e));
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
}

// Buffers of `elements` values on the executor's memory, filled with x.
template <class T>
struct buffer {
  T* p = nullptr;
  bool gpu;
  buffer(std::int64_t elements, bool on_gpu, T x) : gpu(on_gpu) {
    std::vector<T> h(static_cast<std::size_t>(std::max<std::int64_t>(elements, 1)), x);
    if (gpu) {
      check(cudaMalloc(reinterpret_cast<void**>(&p), h.size() * sizeof(T)), "cudaMalloc");
      check(cudaMemcpy(p, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy");
    } else {
      p = new T[h.size()];
      std::copy(h.begin(), h.end(), p);
    }
  }
  ~buffer() { gpu ? (void)cudaFree(p) : delete[] p; }
  buffer(buffer const&) = delete;
  buffer& operator=(buffer const&) = delete;
};

// The median over reps of the slowest rank's time of f, in seconds, over
// the ranks of comm (MPI_COMM_SELF: rank 0 alone, while the others wait in
// the MPI_Bcast that follows).
double median_time(MPI_Comm comm, bool gpu, cudaStream_t stream, int reps, std::function<void()> const& f) {
  for (int i = 0; i < 2; ++i) f();  // warm-up
  if (gpu) check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  std::vector<double> times;
  cudaEvent_t start = nullptr, stop = nullptr;
  if (gpu) {
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
  }
  for (int i = 0; i < reps; ++i) {
    MPI_Barrier(comm);
    double mine = 0;
    if (gpu) {
      check(cudaEventRecord(start, stream), "cudaEventRecord");
      f();
      check(cudaEventRecord(stop, stream), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      mine = ms * 1e-3;
    } else {
      auto const t0 = std::chrono::steady_clock::now();
      f();
      mine = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    double slowest = 0;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    times.push_back(slowest);
  }
  if (gpu) {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  std::nth_element(times.begin(), times.begin() + times.size() / 2, times.end());
  return times[times.size() / 2];
}

struct entry {
  std::string name;
  double seconds;
  double pct_of_copy;
  double efficiency;
  std::vector<std::pair<std::string, double>> counters = {};
};

// The collectives' cost model: an MPI_Allgather of b bytes a rank costs
// alpha + beta b, alpha and beta (latency and inverse bandwidth over the P
// ranks) taken piecewise from all-gathers measured in the same run at 8 B,
// 4 KiB, 64 KiB and 1 MiB (the segment around b: MPI switches protocols
// between them). A split call's collectives are the agreement's all-gather
// (`agreement` bytes a rank) and the summaries' (`summary` bytes a rank):
// the model's sum is checked against the two measured back to back
// (counters model_us, model_error_pct).
std::vector<entry> collective_model(std::int64_t agreement, std::int64_t summary, int size, int reps) {
  std::int64_t const sizes[] = {8, 4096, 65536, std::int64_t(1) << 20};
  std::vector<char> send(static_cast<std::size_t>(std::max<std::int64_t>({summary, agreement, sizes[3]})));
  std::vector<char> recv(send.size() * static_cast<std::size_t>(size));
  auto gather = [&](std::int64_t b) {
    MPI_Allgather(send.data(), int(b), MPI_BYTE, recv.data(), int(b), MPI_BYTE, MPI_COMM_WORLD);
  };
  auto name = [&](std::int64_t b) { return fmt::format("dist_allgather/ranks:{}/bytes:{}", size, b); };
  std::vector<entry> out;
  double t[4];
  for (int i = 0; i < 4; ++i) {
    t[i] = median_time(MPI_COMM_WORLD, false, nullptr, reps, [&] { gather(sizes[i]); });
    out.push_back({name(sizes[i]), t[i], 0, 1});
  }
  auto model = [&](std::int64_t b) {
    int const i = b < sizes[1] ? 0 : b < sizes[2] ? 1 : 2;
    double const beta = (t[i + 1] - t[i]) / double(sizes[i + 1] - sizes[i]);
    return t[i] + beta * double(b - sizes[i]);
  };
  double const measured = median_time(MPI_COMM_WORLD, false, nullptr, reps, [&] {
    gather(agreement);
    gather(summary);
  });
  double const predicted = model(agreement) + model(summary);
  out.push_back(
      {fmt::format("dist_collectives/ranks:{}/bytes:{}+{}", size, agreement, summary),
       measured,
       0,
       1,
       {{"model_us", predicted * 1e6}, {"model_error_pct", 100.0 * (measured - predicted) / predicted}}});
  return out;
}

template <class T>
std::vector<entry> run(options const& o, int rank, int size) {
  cudaStream_t stream = nullptr;
  if (o.gpu) check(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  char const* type = sizeof(T) == 8 ? "f64" : "f32";
  bool const tridiag = o.facility == "tridiag", lfilter = o.facility == "lfilter";
  char const* facility = o.facility.c_str();
  double const words = tridiag ? 5.0 : lfilter ? 2.0 : 3.0;  // the one-device call's traffic an element
  std::vector<T> const fb = {T(0.05), T(0.1), T(0.05)}, fa = {T(1), T(-1.6), T(0.7)};
  std::string const batch = o.count > 1 ? fmt::format("/count:{}", o.count) : std::string();
  std::vector<entry> out;
  double copy_bw = 0;  // bytes per second a rank
  for (bool weak : {true, false}) {
    std::int64_t const n_local = weak ? o.n : o.n / size + (rank < o.n % size ? 1 : 0);
    std::int64_t const n_one = o.n;  // the one-rank call: a rank's slice (weak), the whole sequence (strong)
    std::int64_t const elements = std::max(n_local, n_one) * o.count;
    // linrec: s, t -> w; tridiag: a = c = -1, b = 4, d -> w.
    buffer<T> s(elements, o.gpu, T(tridiag ? 1 : 0.999)), t(elements, o.gpu, T(1)), w(elements, o.gpu, T(0));
    std::int64_t const coefficients = tridiag ? elements : 0;
    buffer<T> a(coefficients, o.gpu, T(-1)), b(coefficients, o.gpu, T(4));
    // comm null: the one-device call.
    auto call = [&](MPI_Comm comm, std::int64_t n) {
      recur::layout const lay = recur::layout::contiguous(n, o.count);
      recur::dist::communicator const c{comm, comm == MPI_COMM_WORLD ? o.nccl_comm : nullptr};
      auto on = [&](auto const& ex) {
        if (lfilter && comm != MPI_COMM_NULL)
          recur::dist::lfilter<T>(c, ex, fb, fa, s.p, w.p, lay);
        else if (lfilter)
          recur::lfilter<T>(ex, fb, fa, s.p, w.p, lay);
        else if (tridiag && comm != MPI_COMM_NULL)
          recur::dist::solve_batched<T>(c, ex, a.p, b.p, a.p, s.p, w.p, lay);
        else if (tridiag)
          recur::solve_batched<T>(ex, a.p, b.p, a.p, s.p, w.p, lay);
        else if (comm != MPI_COMM_NULL)
          recur::dist::linrec<T>(c, ex, s.p, t.p, w.p, lay);
        else
          recur::linrec<T>(ex, s.p, t.p, w.p, lay);
      };
      if (o.gpu)
        on(recur::cuda{stream});
      else
        on(recur::host{});
    };
    if (weak) {  // the copy ceiling: each rank copying its slice
      std::size_t const bytes = sizeof(T) * std::size_t(n_local * o.count);
      double const tc = median_time(MPI_COMM_WORLD, o.gpu, stream, o.reps, [&] {
        if (o.gpu)
          check(cudaMemcpyAsync(w.p, s.p, bytes, cudaMemcpyDeviceToDevice, stream), "cudaMemcpyAsync");
        else
          std::memcpy(w.p, s.p, bytes);
      });
      copy_bw = 2.0 * double(bytes) / tc;
      out.push_back(
          {fmt::format("dist_copy_{}/ranks:{}/n:{}{}", type, size, n_local, batch), tc, 100.0, 1.0});
    }
    double const tp =
        median_time(MPI_COMM_WORLD, o.gpu, stream, o.reps, [&] { call(MPI_COMM_WORLD, n_local); });
    // Rank 0 alone (the one-device call, then in weak mode the split call
    // on MPI_COMM_SELF); the other ranks wait in the MPI_Bcast.
    double t1 = 0, ts = 0;
    if (rank == 0) {
      t1 = median_time(MPI_COMM_SELF, o.gpu, stream, o.reps, [&] { call(MPI_COMM_NULL, n_one); });
      if (weak) ts = median_time(MPI_COMM_SELF, o.gpu, stream, o.reps, [&] { call(MPI_COMM_SELF, n_one); });
    }
    double both[2] = {t1, ts};
    MPI_Bcast(both, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    t1 = both[0];
    ts = both[1];
    std::int64_t const total = (weak ? o.n * size : o.n) * o.count;
    double const pct = 100.0 * words * sizeof(T) * double(total) / tp / (size * copy_bw);
    double const eff = weak ? t1 / tp : t1 / (size * tp);
    char const* mode = weak ? "weak" : "strong";
    out.push_back({fmt::format("dist_{}_{}_{}/ranks:{}/n:{}{}{}", facility, type, mode, size, o.n, batch,
                               o.nccl_comm ? "/nccl" : ""),
                   tp, pct, eff});
    double const pct1 = 100.0 * words * sizeof(T) * double(n_one * o.count) / t1 / copy_bw;
    out.push_back(
        {fmt::format("dist_{}_{}_{}/ranks:1/n:{}{}", facility, type, mode, n_one, batch), t1, pct1, 1.0});
    if (weak)
      out.push_back({fmt::format("dist_{}_{}_split/ranks:1/n:{}{}", facility, type, n_one, batch), ts,
                     100.0 * words * sizeof(T) * double(n_one * o.count) / ts / copy_bw, t1 / ts});
  }
  if (o.gpu) cudaStreamDestroy(stream);
  // The summaries a rank all-gathers: linrec's maps (2 values of T's
  // compute type a sequence), the filter's (1 + 2 count values of the fold
  // type), the tridiagonal rows (1 + 11 count doubles for nrhs = 1).
  std::int64_t const summary = tridiag   ? 8 * (1 + 11 * o.count)
                               : lfilter ? 2 * sizeof(T) * (1 + 2 * o.count)
                                         : 2 * sizeof(T) * o.count;
  for (auto& e : collective_model(recur::dist::agreement_bytes, summary, size, std::max(o.reps, 50)))
    out.push_back(std::move(e));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string const k = argv[i], v = argv[i + 1];
    if (k == "--executor")
      o.gpu = v == "cuda";
    else if (k == "--facility")
      o.facility = v;
    else if (k == "--n")
      o.n = std::stoll(v);
    else if (k == "--count")
      o.count = std::stoll(v);
    else if (k == "--type")
      o.f64 = v == "f64";
    else if (k == "--reps")
      o.reps = std::stoi(v);
    else if (k == "--out")
      o.out = v;
    else if (k == "--nccl")
      o.nccl = v == "1";
  }
  if (o.facility != "linrec" && o.facility != "tridiag" && o.facility != "lfilter") {
    if (rank == 0)
      std::fprintf(stderr, "bench_dist: --facility %s is not linrec, tridiag or lfilter\n",
                   o.facility.c_str());
    MPI_Finalize();
    return 2;
  }
  if (o.gpu) {  // ranks on one host: one GPU each, round robin
    int devices = 0;
    check(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
    check(cudaSetDevice(rank % devices), "cudaSetDevice");
  }
  if (o.nccl) {  // one GPU a rank: NCCL refuses ranks that share one
#if RECUR_HAS_NCCL
    ncclUniqueId id;
    if (rank == 0) ncclGetUniqueId(&id);
    MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, MPI_COMM_WORLD);
    ncclComm_t c = nullptr;
    if (!o.gpu || ncclCommInitRank(&c, size, id, rank) != ncclSuccess) {
      std::fprintf(stderr, "bench_dist: --nccl 1 needs --executor cuda and one GPU a rank\n");
      MPI_Abort(MPI_COMM_WORLD, 2);
    }
    o.nccl_comm = c;
#else
    if (rank == 0) std::fprintf(stderr, "bench_dist: --nccl 1: this build has no NCCL path\n");
    MPI_Finalize();
    return 2;
#endif
  }
  auto const entries = o.f64 ? run<double>(o, rank, size) : run<float>(o, rank, size);
  if (rank == 0) {
    std::string json = fmt::format(
        "{{\n  \"context\": {{\"executable\": \"bench_dist\", \"ranks\": {}, \"executor\": \"{}\"}},\n  "
        "\"benchmarks\": [\n",
        size, o.gpu ? "cuda" : "host");
    for (std::size_t i = 0; i < entries.size(); ++i) {
      std::string extra;
      for (auto const& [k, v] : entries[i].counters) extra += fmt::format(", \"{}\": {:.4f}", k, v);
      json += fmt::format(
          "    {{\"name\": \"{}\", \"real_time\": {:.3f}, \"time_unit\": \"us\", \"pct_of_copy\": {:.2f}, "
          "\"efficiency\": {:.4f}{}}}{}\n",
          entries[i].name, entries[i].seconds * 1e6, entries[i].pct_of_copy, entries[i].efficiency, extra,
          i + 1 < entries.size() ? "," : "");
    }
    json += "  ]\n}\n";
    if (o.out.empty()) {
      std::fputs(json.c_str(), stdout);
    } else if (FILE* f = std::fopen(o.out.c_str(), "w")) {
      std::fputs(json.c_str(), f);
      std::fclose(f);
    }
  }
#if RECUR_HAS_NCCL
  if (o.nccl_comm) ncclCommDestroy(o.nccl_comm);
#endif
  MPI_Finalize();
  return 0;
}
