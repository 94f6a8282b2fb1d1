// recur::dist::solve_batched (include/recur/dist.hpp): each system split
// along its length, one block of rows a rank, solved by the partition
// method one level up (reduce, exchange, finish).
//
// Rank r holds rows f .. l of a system (n_r = l - f + 1). Its interior rows
// f+1 .. l-1 (n_r >= 3) form the plain tridiagonal block A_II, whose outer
// entries a_(f+1) and c_(l-1) couple it to x_f and x_l. With
//   A_II y = d_I,  A_II u = e_0,  A_II w = e_(m-1)   (m = n_r - 2)
// the interior is x_I = y - a_(f+1) x_f u - c_(l-1) x_l w, and rows f and l,
// with x_(f+1) and x_(l-1) substituted, become two rows in x_prev, x_f, x_l
// and x_next alone:
//   row f: a_f x_prev + (b_f - c_f a_(f+1) u_0) x_f - c_f c_(l-1) w_0 x_l
//            = d_f - c_f y_0
//   row l: -a_l a_(f+1) u_(m-1) x_f + (b_l - a_l c_(l-1) w_(m-1)) x_l + c_l x_next
//            = d_l - a_l y_(m-1)
// (x_prev the previous rank's last unknown, x_next the next rank's first).
// Ordered f_0, l_0, f_1, l_1, ... these rows are a tridiagonal system of at
// most 2 P rows (a rank of one row gives one, an empty rank none; periodic
// where the whole system is). The steps:
//   1. reduce: every rank checks its arguments as recur::solve_batched does
//      and solves A_II for its right-hand sides and for [e_0, e_(m-1)] with
//      recur::solve_batched on its executor, into scratch (x is not written),
//      and brings its two rows to the host;
//   2. the ranks agree (agree.hpp), then all-gather the rows (one
//      MPI_Allgather of 3 + 2 (3 + nrhs) values per system and rank);
//   3. every rank solves every reduced system on the host (the same system
//      and the same arithmetic on every rank, so the same bits), and
//      finishes its rows: x_f, x_l, and x_I = y - alpha u - beta w.
// Stability: the local solves follow opt.pivoting on A_II and the reduced
// system is solved with the same pivoting, so each piece is stable as a
// one-device solve of it is; what the split adds is the block elimination,
// stable where the interior's response to its boundary values is bounded.
// Under pivoting partial or automatic that response,
//   rho = max over the interior's two ends of |a_(f+1) u| + |c_(l-1) w|
// (at most 1 for diagonally dominant rows), must pass Thomas's growth bound
// (reference/tridiag_pivot.hpp, 16); a system where it does not on some
// rank, whose A_II is singular or whose reduced system is singular is
// gathered onto rank 0 and solved there by the pivoted Thomas
// (solve_gathered), as one device solves it. With pivoting none nothing is
// tested and a breakdown is reported (info, x NaN).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include <mpi.h>
#include <omp.h>

#include <fmt/format.h>

#include <recur/dist.hpp>
#include <recur/reference/tridiag_solve.hpp>
#include <recur/tridiag.hpp>
#include "../detail/arg_check.hpp"
#include "../split_memory.hpp"
#include "../tridiag_checked.hpp"
#include "agree.hpp"

namespace recur::dist {
namespace {

constexpr char const* fn = "recur::dist::solve_batched";
namespace ref = reference::detail;

// What a rank sends, per system: its status and its rows (doubles: the
// values of T and row numbers below 2^53, exactly), after one header value,
// the rank's row count n_r.
//   [0] breakdown: A_II's first breakdown row (1-based within the rank's
//       rows; 0 none)
//   [1] pivoted: 1 where a local solve pivoted
//   [2] rho, the interior's response (0 without an interior)
//   [3 ..] row f, then row l: sub, diag, sup, nrhs right-hand sides
struct record_shape {
  std::int64_t nrhs;
  std::int64_t row() const { return 3 + nrhs; }
  std::int64_t width() const { return 3 + 2 * row(); }
};

// This rank's part of the call: its checked problem, its record, and what
// the finish needs (scratch and the interior's outer coefficients).
template <class T>
struct local_part {
  recur::detail::tridiag_problem<T> p;
  std::vector<double> record;  // 1 + count * width
  std::shared_ptr<void> y_storage, z_storage;
  T* y = nullptr;  // A_II's solutions, in x's geometry (row 0 of the block at y)
  T* z = nullptr;  // u and w, in the interior's layout, set_stride apart
  std::int64_t set_stride = 0;
  std::vector<T> a1, cm;  // a_(f+1) and c_(l-1) per system
};

// Step 1 on this rank.
template <class Executor, class T>
void reduce(Executor const& ex, local_part<T>& part, tridiag_options const& opt, record_shape const& shape) {
  auto const& p = part.p;
  std::int64_t const n = p.lay.n, count = p.lay.count, nrhs = p.nrhs, rs = p.rhs_stride;
  std::int64_t const es = p.lay.element_stride, bs = p.lay.batch_stride;
  if (n == 0 || count == 0 || nrhs == 0) return;
  std::size_t const cnt = static_cast<std::size_t>(count);
  using column = recur::detail::split_column<T>;
  using flags = recur::detail::split_column<std::int32_t>;
  std::vector<column> cols;
  std::vector<flags> fcols;
  auto at = [](T const* q, std::int64_t o) { return const_cast<T*>(q + o); };
  // Rows f and l (the same row when n == 1) on the host.
  std::vector<T> af(cnt), bf(cnt), cf(cnt), df(cnt * nrhs), al(cnt), bl(cnt), cl(cnt), dl(cnt * nrhs);
  std::int64_t const last = (n - 1) * es;
  cols.push_back({at(p.a, 0), af.data()});
  cols.push_back({at(p.b, 0), bf.data()});
  cols.push_back({at(p.c, 0), cf.data()});
  cols.push_back({at(p.a, last), al.data()});
  cols.push_back({at(p.b, last), bl.data()});
  cols.push_back({at(p.c, last), cl.data()});
  for (std::int64_t r = 0; r < nrhs; ++r) {
    cols.push_back({at(p.d, r * rs), df.data() + r * count});
    cols.push_back({at(p.d, last + r * rs), dl.data() + r * count});
  }
  std::int64_t const m = n - 2;
  std::vector<T> y0(cnt * nrhs), ym(cnt * nrhs), u0(cnt), um(cnt), w0(cnt), wm(cnt);
  std::vector<std::int32_t> status(4 * cnt);
  if (m > 0) {
    // A_II solved for d and for [e_0, e_(m-1)] by recur::solve_batched.
    layout const li{m, count, es, bs};
    std::int64_t const extent = recur::detail::layout_extent(p.lay);
    std::int64_t const below = rs < 0 ? (nrhs - 1) * -rs : 0;
    std::int64_t const ysize = extent + (nrhs - 1) * (rs < 0 ? -rs : rs);
    part.y_storage = recur::detail::split_alloc(ex, sizeof(T) * static_cast<std::size_t>(ysize));
    part.y = static_cast<T*>(part.y_storage.get()) + below;
    part.set_stride = recur::detail::layout_extent(li);
    part.z_storage =
        recur::detail::split_alloc(ex, sizeof(T) * 2 * static_cast<std::size_t>(part.set_stride));
    part.z = static_cast<T*>(part.z_storage.get());
    auto const flag_storage = recur::detail::split_alloc(ex, sizeof(std::int32_t) * 4 * cnt);
    auto* const fl = static_cast<std::int32_t*>(flag_storage.get());
    tridiag_options o;
    o.algorithm = opt.algorithm;
    o.pivoting = opt.pivoting;
    o.nrhs = nrhs;
    o.rhs_stride = rs;
    o.info = fl;
    o.pivoted = fl + count;
    recur::solve_batched<T>(ex, p.a + es, p.b + es, p.c + es, p.d + es, part.y + es, li, o);
    recur::detail::split_unit_columns(ex, part.z, li, part.set_stride);
    o.nrhs = 2;
    o.rhs_stride = part.set_stride;
    o.info = fl + 2 * count;
    o.pivoted = fl + 3 * count;
    recur::solve_batched<T>(ex, p.a + es, p.b + es, p.c + es, part.z, part.z, li, o);
    part.a1.resize(cnt);
    part.cm.resize(cnt);
    cols.push_back({at(p.a, es), part.a1.data()});
    cols.push_back({at(p.c, (n - 2) * es), part.cm.data()});
    std::int64_t const end = (m - 1) * es;
    cols.push_back({part.z, u0.data()});
    cols.push_back({part.z + end, um.data()});
    cols.push_back({part.z + part.set_stride, w0.data()});
    cols.push_back({part.z + part.set_stride + end, wm.data()});
    for (std::int64_t r = 0; r < nrhs; ++r) {
      cols.push_back({part.y + es + r * rs, y0.data() + r * count});
      cols.push_back({part.y + es + end + r * rs, ym.data() + r * count});
    }
    for (int j = 0; j < 4; ++j) fcols.push_back({fl + j * count, status.data() + j * cnt});
    recur::detail::split_gather(ex, fcols.data(), fcols.size(), 1, count);
  }
  recur::detail::split_gather(ex, cols.data(), cols.size(), bs, count);

  for (std::int64_t k = 0; k < count; ++k) {
    double* const rec = part.record.data() + 1 + k * shape.width();
    double* const rf = rec + 3;
    double* const rl = rf + shape.row();
    T const s = m > 0 ? part.a1[k] : T(0), t = m > 0 ? part.cm[k] : T(0);
    if (m > 0) {
      std::int32_t const i1 = status[k], i2 = status[2 * cnt + k];
      std::int32_t const first = i1 > 0 && i2 > 0 ? std::min(i1, i2) : std::max(i1, i2);
      rec[0] = first > 0 ? double(first) + 1 : 0;  // A_II's row j is the rank's row j + 1
      rec[1] = status[cnt + k] || status[3 * cnt + k] ? 1 : 0;
      rec[2] =
          std::fmax(std::fabs(s * u0[k]) + std::fabs(t * w0[k]), std::fabs(s * um[k]) + std::fabs(t * wm[k]));
      if (std::isnan(s * u0[k] + t * w0[k] + s * um[k] + t * wm[k]))
        rec[2] = std::numeric_limits<double>::infinity();
    }
    rf[0] = af[k];
    rf[1] = m > 0 ? bf[k] - cf[k] * s * u0[k] : bf[k];
    rf[2] = m > 0 ? -cf[k] * t * w0[k] : cf[k];
    for (std::int64_t r = 0; r < nrhs; ++r)
      rf[3 + r] = m > 0 ? df[r * count + k] - cf[k] * y0[r * count + k] : df[r * count + k];
    if (n >= 2) {
      rl[0] = m > 0 ? -al[k] * s * um[k] : al[k];
      rl[1] = m > 0 ? bl[k] - al[k] * t * wm[k] : bl[k];
      rl[2] = cl[k];
      for (std::int64_t r = 0; r < nrhs; ++r)
        rl[3 + r] = m > 0 ? dl[r * count + k] - al[k] * ym[r * count + k] : dl[r * count + k];
    }
  }
}

// Step 3's reduced system of system k: assembled from every rank's rows,
// solved, its outcome and this rank's x_f and x_l (nrhs each) returned.
struct reduced_outcome {
  std::int64_t info = 0;  // 1-based global row, 0 solved
  bool pivoted = false;
  bool again = false;  // pivoting partial or automatic: the split cannot vouch for it (gathered below)
};

template <class T>
reduced_outcome solve_reduced(std::vector<double> const& all, std::int64_t per_rank, int ranks, int me,
                              std::int64_t k, record_shape const& shape, tridiag_options const& opt, T* xf,
                              T* xl) {
  using V = std::vector<T>;
  ref::equations<T> e;
  std::vector<V> v(static_cast<std::size_t>(shape.nrhs));
  std::vector<std::int64_t> row_of;  // the global row of each reduced row
  reduced_outcome out;
  std::int64_t first = 0, mine = -1;
  for (int r = 0; r < ranks; ++r) {
    double const* const base = all.data() + r * per_rank;
    std::int64_t const n = static_cast<std::int64_t>(base[0]);
    double const* const rec = base + 1 + k * shape.width();
    if (n >= 3) {
      if (rec[0] > 0 && out.info == 0) out.info = first + static_cast<std::int64_t>(rec[0]);
      out.pivoted = out.pivoted || rec[1] != 0;
      if (opt.pivoting != tridiag_pivoting::none && !ref::growth_acceptable(rec[2], 1.0) && out.info == 0)
        out.info = first + 1;
      out.again = out.again || (opt.pivoting != tridiag_pivoting::none && out.info != 0);
    }
    if (r == me) mine = static_cast<std::int64_t>(e.b.size());
    for (std::int64_t j = 0; j < std::min<std::int64_t>(n, 2); ++j) {
      double const* const row = rec + 3 + j * shape.row();
      e.a.push_back(T(row[0]));
      e.b.push_back(T(row[1]));
      e.c.push_back(T(row[2]));
      for (std::int64_t q = 0; q < shape.nrhs; ++q) v[q].push_back(T(row[3 + q]));
      row_of.push_back(j == 0 ? first : first + n - 1);
    }
    first += n;
  }
  std::size_t const rows = e.b.size();
  T const nan = std::numeric_limits<T>::quiet_NaN();
  auto give = [&](bool ok) {
    if (mine < 0) return;
    std::int64_t const n = static_cast<std::int64_t>(all[me * per_rank]);
    for (std::int64_t q = 0; q < shape.nrhs; ++q) {
      xf[q] = ok ? v[q][mine] : nan;
      if (n >= 2) xl[q] = ok ? v[q][mine + 1] : nan;
    }
  };
  if (out.info > 0 || rows == 0) {
    give(out.info == 0);
    return out;
  }
  bool periodic = opt.periodic;
  if (periodic && rows < 3) {  // the corners fold into the other entries
    if (rows == 2) {
      e.c[0] += e.a[0];
      e.a[1] += e.c[1];
    } else {
      e.b[0] += e.a[0] + e.c[0];
    }
    periodic = false;
  }
  if (!periodic) {
    e.a[0] = T(0);
    e.c[rows - 1] = T(0);
  }
  tridiag_options ro;
  ro.pivoting = opt.pivoting;
  ro.periodic = periodic;
  ref::system_outcome const s = ref::solve_thomas_system(e, v, ro);
  out.pivoted = out.pivoted || s.pivoted;
  if (s.info > 0) {
    std::size_t const i = static_cast<std::size_t>(s.info - 1);
    out.info = i < rows ? row_of[i] + 1 : first;
    out.again = opt.pivoting != tridiag_pivoting::none;
  }
  give(out.info == 0);
  return out;
}

// Step 4 (pivoting partial or automatic), for system k where the split
// cannot vouch for its answer: the whole system gathered onto rank 0,
// solved there by the pivoted Thomas with opt's pivoting (what one device
// runs), and each rank's rows of x sent back and written over the split's.
// Rows travel as one MPI datatype of 3 + nrhs values (x: nrhs), so counts
// are rows. Returns the system's outcome, the same on every rank.
template <class Executor, class T>
reduced_outcome solve_gathered(communicator const& c, detail::rank_of const& me, Executor const& ex,
                               recur::detail::tridiag_problem<T> const& p,
                               std::vector<std::int64_t> const& rows, std::int64_t k,
                               tridiag_options const& opt, detail::call_facts const& facts) {
  std::int64_t const n = p.lay.n, nrhs = p.nrhs, width = 3 + nrhs, es = p.lay.element_stride;
  std::int64_t total = 0;
  for (std::int64_t r : rows) total += r;
  std::vector<T> mine, whole, cols, x_mine, x_whole;
  std::vector<int> counts(rows.size()), displs(rows.size());
  detail::agree_after(fn, c.comm, me, facts, [&] {
    mine.resize(static_cast<std::size_t>(n * width));
    cols.resize(static_cast<std::size_t>(n * width));
    x_mine.resize(static_cast<std::size_t>(n * nrhs));
    if (me.rank == 0) {
      whole.resize(static_cast<std::size_t>(total * width));
      x_whole.resize(static_cast<std::size_t>(total * nrhs));
    }
    std::vector<recur::detail::split_column<T>> in;
    std::int64_t const o = p.lay.offset(0, k);
    auto at = [](T const* q) { return const_cast<T*>(q); };
    in.push_back({at(p.a + o), cols.data()});
    in.push_back({at(p.b + o), cols.data() + n});
    in.push_back({at(p.c + o), cols.data() + 2 * n});
    for (std::int64_t r = 0; r < nrhs; ++r)
      in.push_back({at(p.d + o + r * p.rhs_stride), cols.data() + (3 + r) * n});
    if (n > 0) recur::detail::split_gather(ex, in.data(), in.size(), es, n);
    for (std::int64_t i = 0; i < n; ++i)
      for (std::int64_t j = 0; j < width; ++j) mine[i * width + j] = cols[j * n + i];
  });
  std::int64_t first = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    counts[r] = static_cast<int>(rows[r]);
    displs[r] = static_cast<int>(first);
    first += rows[r];
  }
  MPI_Datatype row, xrow;
  MPI_Type_contiguous(static_cast<int>(sizeof(T) * width), MPI_BYTE, &row);
  MPI_Type_contiguous(static_cast<int>(sizeof(T) * nrhs), MPI_BYTE, &xrow);
  MPI_Type_commit(&row);
  MPI_Type_commit(&xrow);
  MPI_Gatherv(mine.data(), static_cast<int>(n), row, whole.data(), counts.data(), displs.data(), row, 0,
              c.comm);
  std::int64_t result[2] = {0, 0};
  if (me.rank == 0) {
    ref::equations<T> e{std::vector<T>(total), std::vector<T>(total), std::vector<T>(total), {}};
    std::vector<std::vector<T>> v(static_cast<std::size_t>(nrhs), std::vector<T>(total));
    for (std::int64_t i = 0; i < total; ++i) {
      T const* const w = whole.data() + i * width;
      e.a[i] = i > 0 || opt.periodic ? w[0] : T(0);
      e.b[i] = w[1];
      e.c[i] = i + 1 < total || opt.periodic ? w[2] : T(0);
      for (std::int64_t r = 0; r < nrhs; ++r) v[r][i] = w[3 + r];
    }
    tridiag_options so;
    so.pivoting = opt.pivoting;
    so.periodic = opt.periodic;
    ref::system_outcome const out = ref::solve_thomas_system(e, v, so);
    result[0] = out.info;
    result[1] = out.pivoted;
    for (std::int64_t i = 0; i < total; ++i)
      for (std::int64_t r = 0; r < nrhs; ++r) x_whole[i * nrhs + r] = v[r][i];
  }
  MPI_Bcast(result, 2, MPI_INT64_T, 0, c.comm);
  MPI_Scatterv(x_whole.data(), counts.data(), displs.data(), xrow, x_mine.data(), static_cast<int>(n), xrow,
               0, c.comm);
  MPI_Type_free(&row);
  MPI_Type_free(&xrow);
  std::vector<recur::detail::split_column<T>> out;
  for (std::int64_t r = 0; r < nrhs; ++r) {
    for (std::int64_t i = 0; i < n; ++i) cols[r * n + i] = x_mine[i * nrhs + r];
    out.push_back({p.x + p.lay.offset(0, k) + r * p.rhs_stride, cols.data() + r * n});
  }
  if (n > 0) recur::detail::split_scatter(ex, out.data(), out.size(), es, n);
  return {result[0], result[1] != 0, false};
}

template <class Executor, class T>
void run(communicator const& c, Executor const& ex, T const* a, T const* b, T const* cc, T const* d, T* x,
         layout const& lay, tridiag_options const& opt) {
  auto const me = detail::check_communicator(fn, c.comm);
  record_shape const shape{opt.nrhs > 0 ? opt.nrhs : 0};
  std::int64_t const count = lay.count > 0 ? lay.count : 0;
  local_part<T> part;
  std::vector<double> all;
  std::int64_t const per_rank = 1 + count * shape.width();
  auto facts = detail::batch_facts<T, Executor>(lay.count, "the number of systems (lay.count)");
  facts.set(3, opt.nrhs, "opt.nrhs");
  facts.set(4, static_cast<std::int64_t>(opt.algorithm), "opt.algorithm");
  facts.set(5, static_cast<std::int64_t>(opt.pivoting), "opt.pivoting");
  facts.set(6, opt.periodic ? 1 : 0, "opt.periodic");
  facts.set(7, static_cast<std::int64_t>(opt.refinement), "opt.refinement");
  // Everything that can fail on one rank alone runs before the agreement;
  // nothing the caller passed is written.
  detail::agree_after(fn, c.comm, me, facts, [&] {
    if (opt.refinement != tridiag_refinement::none)
      throw invalid_argument(
          fmt::format("{}: opt.refinement = mixed is not available split across ranks", fn));
    tridiag_options local = opt;
    local.periodic = false;  // the ring closes across the ranks: checked below on the whole system
    part.p = recur::detail::tridiag_checked(fn, ex, a, b, cc, d, x, lay, local);
    if (std::uint64_t(per_rank) * me.size * sizeof(double) > std::uint64_t(std::numeric_limits<int>::max()))
      throw invalid_argument(
          fmt::format("{}: lay.count = {} with nrhs = {} is more than one MPI_Allgather carries", fn,
                      lay.count, opt.nrhs));
    part.record.assign(static_cast<std::size_t>(per_rank), 0.0);
    part.record[0] = static_cast<double>(lay.n);
    all.resize(static_cast<std::size_t>(per_rank) * static_cast<std::size_t>(me.size));
    reduce(ex, part, opt, shape);
  });
  if (count == 0) return;
  MPI_Allgather(part.record.data(), static_cast<int>(per_rank), MPI_DOUBLE, all.data(),
                static_cast<int>(per_rank), MPI_DOUBLE, c.comm);
  std::int64_t total = 0;
  for (int r = 0; r < me.size; ++r) total += static_cast<std::int64_t>(all[r * per_rank]);
  if (opt.periodic && total < 3 && shape.nrhs > 0)
    throw invalid_argument(
        fmt::format("{}: opt.periodic needs n >= 3 over all ranks; the ranks hold {} rows", fn, total));

  auto const& p = part.p;
  std::int64_t const n = p.lay.n, nrhs = shape.nrhs;
  std::size_t const cnt = static_cast<std::size_t>(count);
  std::vector<T> xf(cnt * nrhs), xl(cnt * nrhs), alpha(cnt * nrhs), beta(cnt * nrhs);
  std::vector<std::int32_t> info(cnt), pivoted(cnt), zeros(cnt, 0);
  std::vector<std::int64_t> again;  // systems for step 4
  std::vector<reduced_outcome> outcome(cnt);
  // The reduced systems are independent: over the host's threads (each
  // system's arithmetic is the same whatever the thread count).
  int threads = 0;  // recur::cuda: every host thread
  if constexpr (std::is_same_v<Executor, host>) threads = ex.threads;
#pragma omp parallel for schedule(dynamic, 64) num_threads(threads > 0 ? threads : omp_get_max_threads())
  for (std::int64_t k = 0; k < count; ++k) {
    std::vector<T> f(nrhs), l(nrhs);
    outcome[k] = total > 0 && nrhs > 0
                     ? solve_reduced<T>(all, per_rank, me.size, me.rank, k, shape, opt, f.data(), l.data())
                     : reduced_outcome{};
    for (std::int64_t r = 0; r < nrhs; ++r) {
      xf[r * count + k] = f[r];
      xl[r * count + k] = l[r];
      if (n >= 3) {
        alpha[k * nrhs + r] = part.a1[k] * f[r];
        beta[k * nrhs + r] = part.cm[k] * l[r];
      }
    }
  }
  for (std::int64_t k = 0; k < count; ++k) {
    reduced_outcome const& o = outcome[k];
    info[k] =
        static_cast<std::int32_t>(std::min<std::int64_t>(o.info, std::numeric_limits<std::int32_t>::max()));
    pivoted[k] = o.pivoted ? 1 : 0;
    // Rows beyond one MPI count stay reported.
    if (o.again && total <= std::numeric_limits<int>::max()) again.push_back(k);
  }
  // Step 3's writes: the interior, then rows f and l, then the outputs.
  if (n >= 3 && nrhs > 0) {
    std::int64_t const es = p.lay.element_stride;
    layout const li{n - 2, count, es, p.lay.batch_stride};
    recur::detail::split_combine<T>(ex, {p.x + es, part.y + es, li, nrhs, p.rhs_stride, part.z,
                                         part.set_stride, alpha.data(), beta.data()});
  }
  std::vector<recur::detail::split_column<T>> cols;
  if (n >= 1)
    for (std::int64_t r = 0; r < nrhs; ++r) {
      cols.push_back({p.x + r * p.rhs_stride, xf.data() + r * count});
      if (n >= 2)
        cols.push_back({p.x + (n - 1) * p.lay.element_stride + r * p.rhs_stride, xl.data() + r * count});
    }
  recur::detail::split_scatter(ex, cols.data(), cols.size(), p.lay.batch_stride, count);
  if (!again.empty()) {
    std::vector<std::int64_t> rows(static_cast<std::size_t>(me.size));
    for (int r = 0; r < me.size; ++r) rows[r] = static_cast<std::int64_t>(all[r * per_rank]);
    for (std::int64_t k : again) {
      reduced_outcome const o = solve_gathered(c, me, ex, p, rows, k, opt, facts);
      info[k] =
          static_cast<std::int32_t>(std::min<std::int64_t>(o.info, std::numeric_limits<std::int32_t>::max()));
      pivoted[k] = o.pivoted ? 1 : 0;
    }
  }
  std::vector<recur::detail::split_column<std::int32_t>> outs;
  if (opt.info) outs.push_back({opt.info, info.data()});
  if (opt.pivoted) outs.push_back({opt.pivoted, pivoted.data()});
  if (opt.refinement_steps) outs.push_back({opt.refinement_steps, zeros.data()});
  recur::detail::split_scatter(ex, outs.data(), outs.size(), 1, count);
}

}  // namespace

template <real_value T>
void solve_batched(communicator const& comm, host const& ex, std::type_identity_t<T> const* a,
                   std::type_identity_t<T> const* b, std::type_identity_t<T> const* c,
                   std::type_identity_t<T> const* d, T* x, layout const& lay, tridiag_options const& opt) {
  run<host, T>(comm, ex, a, b, c, d, x, lay, opt);
}

template <real_value T>
void solve_batched(communicator const& comm, cuda const& ex, std::type_identity_t<T> const* a,
                   std::type_identity_t<T> const* b, std::type_identity_t<T> const* c,
                   std::type_identity_t<T> const* d, T* x, layout const& lay, tridiag_options const& opt) {
  run<cuda, T>(comm, ex, a, b, c, d, x, lay, opt);
}

#define RECUR_DIST_TRIDIAG(E, T)                                                                            \
  template void solve_batched<T>(communicator const&, E const&, T const*, T const*, T const*, T const*, T*, \
                                 layout const&, tridiag_options const&);
RECUR_DIST_TRIDIAG(host, float)
RECUR_DIST_TRIDIAG(host, double)
RECUR_DIST_TRIDIAG(cuda, float)
RECUR_DIST_TRIDIAG(cuda, double)
#undef RECUR_DIST_TRIDIAG

}  // namespace recur::dist
