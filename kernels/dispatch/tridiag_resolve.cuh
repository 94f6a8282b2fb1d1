#pragma once
// What runs for a batch of tridiagonal systems on the GPU: the one place
// that maps a request (layout, value type, options) and a device
// (architecture, shared memory) to a plan, as ranked lists of the forms in
// tridiag_forms.cuh, each tried where its predicate says it applies, the
// thresholds from the architecture's tuning policy
// (kernels/tuning/tuning_tridiag.cuh). Host code only; the launches are in
// dispatch_tridiag.cuh. Internal: none of this is API.
//
// Reading order: plan_tridiag (the options: the pivoted form, partial
// pivoting's tile, the algorithm's form, the periodic split, automatic's
// screen), tridiag_resolve_automatic (the algorithm automatic runs),
// tridiag_form_of (each algorithm's form), tridiag_plan_thomas_pcr (the
// ranked list of the default algorithm).

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <variant>

#include "tridiag_forms.cuh"

namespace recur::detail {

// What the caller asks for (tridiag_options' fields that choose the form).
struct tridiag_request {
  layout lay;
  std::int64_t nrhs = 1;
  tridiag_algorithm algorithm = tridiag_algorithm::automatic;
  tridiag_pivoting pivoting = tridiag_pivoting::automatic;
  bool periodic = false;
  tridiag_refinement refinement = tridiag_refinement::none;
  bool in_place = false;  // x == d
};

// pivoting = automatic's stability screen around a no-pivot form: inside,
// the form flags the systems that fail it as it solves them and leaves
// them unwritten; after, a kernel of its own reads a, b and c again after
// the form (not in place); both then solve the flagged systems again with
// the bounded pivoted form.
enum class tridiag_screen { none, inside, after };

// A solve: the form, and around it the periodic split and the screen.
struct tridiag_solve_plan {
  tridiag_form form;
  tridiag_device dev;  // for the plans made at launch (the partitioned form's reduced systems, a fallback)
  bool periodic = false;
  tridiag_screen screen = tridiag_screen::none;
};

// A plan, the algorithm it runs (automatic resolved; thomas for the pivoted
// form), or why the algorithm cannot run the shape.
struct tridiag_choice {
  std::optional<tridiag_solve_plan> plan;
  tridiag_algorithm algorithm = tridiag_algorithm::thomas;
  char const* refusal = nullptr;  // "needs ...", where plan is empty
};

// f.template operator()<P>() with P the tuning policy of a device of
// compute capability cc_major.
template <class T, class F>
decltype(auto) tridiag_with_policy(int cc_major, F&& f) {
  if (cc_major >= 9) return f.template operator()<kernels::tridiag_policy_sm90<T>>();
  return f.template operator()<kernels::tridiag_policy_sm80<T>>();
}

// --- Thomas-PCR's ranked list ---------------------------------------------

// The join of G segments.
template <class T, class P>
int tridiag_segments_join(int G) {
  return G <= P::join_pcr_max_segments       ? kernels::segment_join_by_pcr
         : G >= P::join_scatter_min_segments ? kernels::segment_join_by_scatter
                                             : kernels::segment_join_by_thomas;
}

// The columns forms (any layout; only adjacent systems make full lines):
// segments joined in a cluster (d in registers, f32's wide chunks, or
// plain) where the systems are long, else whole systems. allow_segments
// false gives what the segmented form falls back to where its clusters
// cannot run.
template <class T, class P>
std::optional<tridiag_form> tridiag_plan_columns_ranked(layout const& lay, std::size_t max_smem,
                                                        bool allow_segments) {
  std::int64_t const n = lay.n;
  if (allow_segments && n >= P::segment_min_n && n > P::segment_rows) {
    bool const long_early =
        P::long_segments_early && n > 2 * std::int64_t(P::segment_rows_long) &&
        n <= P::max_segments * P::segment_rows_long &&
        n / ((n + P::segment_rows_long - 1) / P::segment_rows_long) >= P::long_segments_min_rows;
    bool const long_any = n > P::max_segments * std::int64_t(P::segment_rows) &&
                          n <= P::max_segments * std::int64_t(P::segment_rows_long);
    int const seg = long_early || long_any ? P::segment_rows_long : P::segment_rows;
    std::int64_t const G = std::min<std::int64_t>((n + seg - 1) / seg, P::max_segments), shortest = n / G;
    // 1. d in registers: segments of exactly segment_rows_long rows, whole chunks.
    if (shortest == P::segment_rows_long && G >= P::dregs_min_segments && shortest % P::dregs_rows == 0 &&
        shortest / P::dregs_rows <= P::dregs_max_chunks)
      if (auto pl = tridiag_plan_segments_dregs<T>(lay, max_smem, int(G))) return *pl;
    // 2. The same a little short of such a split (4095 rows), identity rows past n.
    if (std::int64_t const pad = G * P::segment_rows_long - n;
        pad > 0 && pad <= P::dregs_max_pad && G >= P::dregs_min_segments &&
        P::segment_rows_long % P::dregs_rows == 0 &&
        P::segment_rows_long / P::dregs_rows <= P::dregs_max_chunks)
      if (auto pl = tridiag_plan_segments_dregs<T>(lay, max_smem, int(G), int(pad))) return *pl;
    int const join = tridiag_segments_join<T, P>(int(G));
    // 3. f32 at the most segments: 4 or 8 chunks of exactly 32 rows a segment.
    if (P::wide_segments && G >= P::max_segments) {
      std::int64_t const cw = std::bit_floor(std::uint64_t(std::max<std::int64_t>(
          1, std::min(std::clamp<std::int64_t>((shortest + 31) / 32, 1, 32), shortest / 2))));
      if ((cw == 8 || cw == 4) && G * cw * 32 == n)
        if (auto pl = tridiag_plan_segments_wide<T>(lay, max_smem, int(G), int(cw), join)) return *pl;
    }
    // 4. Plain segments.
    if (auto pl = tridiag_plan_segments<T>(lay, max_smem, seg, join, P::max_segments, P::segment_rows_long))
      return *pl;
  }
  // 5. Whole systems a block.
  int const rows = n > P::columns_long_n ? P::columns_rows_long : P::columns_rows;
  if (auto pl = tridiag_plan_columns<T>(lay, max_smem, rows)) return *pl;
  return {};
}

// Thomas-PCR's threads a system on a tile: about thomas_pcr_rows rows
// each, a power of two from 32 to thomas_pcr_max_threads.
template <class P>
int tridiag_thomas_pcr_threads(std::int64_t n) {
  return std::clamp(int(std::bit_floor(std::uint64_t(std::max<std::int64_t>(1, n / P::thomas_pcr_rows)))), 32,
                    std::max(32, P::thomas_pcr_max_threads));
}

template <class T, class P>
std::optional<tridiag_partition_plan> tridiag_plan_partition_for(layout const& lay, std::size_t max_smem,
                                                                 tridiag_algorithm inner, bool regs) {
  return tridiag_plan_partition<T>(lay, max_smem, P::partition_chunk, inner, regs, P::partition_threads,
                                   P::partition_window_smem);
}

// Thomas-PCR on a tile of systems, from registers where the layout allows
// (the direct form), or the partitioned form where a system does not fit
// or an interleaved tile would be narrower than a 32-byte sector.
template <class T, class P>
std::optional<tridiag_form> tridiag_plan_thomas_pcr_tiled(layout const& lay, std::size_t max_smem) {
  using namespace tridiag_shape;
  std::int64_t const n = lay.n;
  // One warp a system with chunks in registers: interleaved batches only
  // (contiguous ones need the occupancy more).
  std::int64_t const chunks = std::max<std::int64_t>(1, std::min<std::int64_t>(32, n / 2));
  bool const regs = !rows_fast(lay) && (n + chunks - 1) / chunks > P::thomas_pcr_regs_min_rows;
  auto tile = tridiag_plan_thomas_pcr_tile<T>(
      lay, max_smem, tridiag_thomas_pcr_threads<P>(n),
      rows_fast(lay) ? P::thomas_pcr_smem : P::thomas_pcr_smem_interleaved, 32, regs);
  if (!tile) {
    if (auto pl =
            tridiag_plan_partition_for<T, P>(lay, max_smem, tridiag_algorithm::thomas_pcr, P::partition_regs))
      return *pl;
    return {};
  }
  if (rows_fast(lay) && (lay.count + tile->systems - 1) / tile->systems <= P::small_batch_tiles)
    tile->threads = std::max(tile->threads, P::small_batch_threads);
  if (!rows_fast(lay) && tile->systems < lay.count && tile->systems * sizeof(T) < 32) {
    if (auto pl = tridiag_plan_partition_for<T, P>(lay, max_smem, tridiag_algorithm::thomas_pcr, false))
      return *pl;
    if (n >= 4) return {};
  }
  if (tile->solver != kernels::tile_solver::thomas_pcr_regs)
    if (auto pl = tridiag_plan_direct<T>(lay, P::direct_min_fill)) return *pl;
  return *tile;
}

// Thomas-PCR: the first form that applies. allow_segments false gives what
// the segmented form falls back to where its clusters cannot run.
template <class T, class P>
std::optional<tridiag_form> tridiag_plan_thomas_pcr(layout const& lay, std::size_t max_smem,
                                                    bool allow_segments = true) {
  using namespace tridiag_shape;
  std::int64_t const n = lay.n;
  bool const adjacent = !rows_fast(lay) && lay.batch_stride == 1;  // systems side by side
  bool const small = adjacent && lay.count < P::columns_min_count;
  // 1. A small interleaved batch of n = Lanes R: the direct form through
  //    shared memory.
  auto const direct =
      small ? tridiag_plan_direct_columns<T>(lay, max_smem, P::direct_min_fill) : std::nullopt;
  if (direct && n == direct->size()) return *direct;
  // 2. A small interleaved batch of n = 16 C: whole systems, rows fetched at once.
  if (small)
    if (auto pl = tridiag_plan_columns_burst<T>(lay, max_smem)) return *pl;
  //    Other small interleaved batches: the direct form with identity rows past n.
  if (direct) return *direct;
  // 3. A wide interleaved batch, or a small one of systems longer than the
  //    direct form through shared memory takes: the columns forms
  //    (tune_tridiag inter columns512, n:600/batch:512 to n:2047/batch:2047).
  if (adjacent && (!small || n > tridiag_direct_columns_max_n<T>))
    if (auto pl = tridiag_plan_columns_ranked<T, P>(lay, max_smem, allow_segments)) return pl;
  // 4. A tile, the direct form or the partitioned form.
  return tridiag_plan_thomas_pcr_tiled<T, P>(lay, max_smem);
}

// --- Each algorithm's form --------------------------------------------------

template <class T, class P>
std::optional<tridiag_tile_plan> tridiag_plan_thomas_tile_for(layout const& lay, std::size_t max_smem) {
  return tridiag_plan_thomas_tile<T>(lay, max_smem, P::thomas_smem, P::thomas_max_systems,
                                     P::thomas_min_systems, P::thomas_min_threads);
}

// The form of a named algorithm: its tile, or where no tile holds one
// system, the partitioned form with the algorithm solving the reduced
// systems (Thomas: the global-memory Thomas; Bondeli's: its own form).
template <class T, class P>
std::optional<tridiag_form> tridiag_form_of(layout const& lay, tridiag_algorithm alg,
                                            tridiag_device const& dev) {
  using namespace tridiag_shape;
  using kernels::tile_solver;
  std::size_t const max_smem = dev.max_smem;
  std::int64_t const n = lay.n;
  if (n <= 0) return {};
  int const cap = kernels::pcr_items_per_thread;
  int const half = std::clamp(ceil_pow2(n / 2), 32, 512);  // CR's threads: a pair of rows each
  auto outer = [&]() -> std::optional<tridiag_form> {
    if (auto pl = tridiag_plan_partition_for<T, P>(lay, max_smem, alg, P::partition_regs)) return *pl;
    return {};
  };
  auto group = [&](tile_solver s, int gt, int sw) -> std::optional<tridiag_form> {
    if (auto pl = tridiag_plan_group_tile<T>(lay, max_smem, s, gt, sw, P::cr_target_threads, P::cr_smem))
      return *pl;
    return outer();
  };
  switch (alg) {
    case tridiag_algorithm::thomas:
      if (auto pl = tridiag_plan_thomas_tile_for<T, P>(lay, max_smem)) return *pl;
      return tridiag_plan_global_thomas(P::system_threads);
    case tridiag_algorithm::automatic:
    case tridiag_algorithm::thomas_pcr:
      return tridiag_plan_thomas_pcr<T, P>(lay, max_smem);
    case tridiag_algorithm::cr:
      return group(tile_solver::cr_pcr, half, 2);
    case tridiag_algorithm::cr_split:
      return group(tile_solver::cr_split, half, 2);
    case tridiag_algorithm::pcr:
      return group(tile_solver::cr_pcr, std::max(32, ceil_pow2((n + cap - 1) / cap)), int(n));
    case tridiag_algorithm::cr_pcr:
      return group(tile_solver::cr_pcr, half, std::min(P::cr_pcr_switch, half * cap));
    case tridiag_algorithm::rd:
      return group(tile_solver::rd,
                   round32((n + kernels::rd_items_per_thread - 1) / kernels::rd_items_per_thread), 0);
    case tridiag_algorithm::cr_rd:
      return group(tile_solver::cr_rd, half, std::min(P::cr_rd_switch, half * kernels::rd_items_per_thread));
    case tridiag_algorithm::cr_packed: {
      std::int64_t const threads = (n + kernels::cr_packed_rows - 1) / kernels::cr_packed_rows;
      if (threads > kernels::tile_max_threads(tile_solver::cr_packed)) return outer();
      int const gt = round32(threads);
      return group(tile_solver::cr_packed, gt, std::min(std::max(2, P::cr_packed_switch), gt * cap));
    }
    case tridiag_algorithm::pscheme:
      return group(tile_solver::pscheme,
                   std::min<int>(1024, round32((n + P::pscheme_rows - 1) / P::pscheme_rows)), 0);
    case tridiag_algorithm::bondeli:
      return tridiag_plan_bondeli(lay, P::bondeli_threads, P::system_threads);
  }
  return {};
}

// What automatic runs for this shape: Thomas-PCR where it runs adjacent
// systems with full-line rows or segments of a warp from registers (n a
// whole number of their chunks); below automatic_thomas_below rows
// otherwise Thomas's tile (one thread per system); else Thomas-PCR;
// Thomas through global memory where nothing else runs.
template <class T, class P>
tridiag_algorithm tridiag_resolve_automatic(layout const& lay, tridiag_device const& dev) {
  if (lay.n <= 0) return tridiag_algorithm::thomas;
  auto const tp = tridiag_plan_thomas_pcr<T, P>(lay, dev.max_smem);
  if (lay.n < P::automatic_thomas_below && tp) {
    // The direct forms only where n fills their rows exactly (no identity rows).
    auto const* dc = std::get_if<tridiag_direct_columns_plan>(&*tp);
    auto const* dr = std::get_if<tridiag_direct_plan>(&*tp);
    bool const lines = std::holds_alternative<tridiag_columns_plan>(*tp) ||
                       std::holds_alternative<tridiag_segments_plan>(*tp) || (dc && lay.n == dc->size());
    if (lines || (dr && lay.n == dr->size() && dr->lanes < 32 && dr->warps == 1))
      return tridiag_algorithm::thomas_pcr;
  }
  if (lay.n < P::automatic_thomas_below && tridiag_plan_thomas_tile_for<T, P>(lay, dev.max_smem))
    return tridiag_algorithm::thomas;
  return tp ? tridiag_algorithm::thomas_pcr : tridiag_algorithm::thomas;
}

// --- Forms inside forms ----------------------------------------------------

// The partitioned form's reduced systems (contiguous, b = 1): the inner
// algorithm's form; for thomas_pcr, Thomas-PCR's tile with the serial join
// (the reduced systems of dominant and SPD systems are weakly dominant
// coarse systems, on which PCR's join loses digits), or the partitioned
// form again where no tile holds a system (it is shorter, so this ends).
template <class T>
std::optional<tridiag_form> tridiag_plan_reduced(layout const& reduced, tridiag_partition_plan const& pl,
                                                 tridiag_device const& dev) {
  return tridiag_with_policy<T>(dev.cc_major, [&]<class P>() -> std::optional<tridiag_form> {
    if (pl.inner != tridiag_algorithm::thomas_pcr) return tridiag_form_of<T, P>(reduced, pl.inner, dev);
    auto tile = tridiag_plan_thomas_pcr_tile<T>(
        reduced, dev.max_smem, tridiag_thomas_pcr_threads<P>(reduced.n), P::thomas_pcr_smem, 32, false);
    if (!tile) {
      if (auto p = tridiag_plan_partition_for<T, P>(reduced, dev.max_smem, tridiag_algorithm::thomas_pcr,
                                                    P::partition_regs))
        return *p;
      return {};
    }
    if ((reduced.count + tile->systems - 1) / tile->systems <= P::small_batch_tiles)
      tile->threads = std::max(tile->threads, P::small_batch_threads);
    tile->serial_join = true;
    return *tile;
  });
}

// What the segmented form runs where clusters of its size do not fit (a
// device before sm_90, or no room on a GPC): Thomas-PCR without segments.
template <class T>
std::optional<tridiag_form> tridiag_segments_fallback(layout const& lay, tridiag_device const& dev) {
  return tridiag_with_policy<T>(
      dev.cc_major, [&]<class P>() { return tridiag_plan_thomas_pcr<T, P>(lay, dev.max_smem, false); });
}

// rd and cr_rd: their breakdown depends on the right-hand side (RD's self
// check), so several right-hand sides fold it per system in a status array.
inline bool tridiag_rhs_breakdown(kernels::tile_solver s) {
  return s == kernels::tile_solver::rd || s == kernels::tile_solver::cr_rd;
}
inline bool tridiag_rhs_breakdown(tridiag_algorithm a) {
  return a == tridiag_algorithm::rd || a == tridiag_algorithm::cr_rd;
}

// Whether the form screens the systems for automatic as it solves them
// (its kernels take tridiag_args::flags and leave a flagged system's x
// unwritten): every no-pivot form but where the breakdown depends on the
// right-hand side and there are several (rd, cr_rd: a later right-hand
// side may break down after an earlier one is written).
inline bool tridiag_form_screens(tridiag_form const& form, std::int64_t nrhs) {
  if (auto const* t = std::get_if<tridiag_tile_plan>(&form))
    return nrhs <= 1 || !tridiag_rhs_breakdown(t->solver);
  if (auto const* p = std::get_if<tridiag_partition_plan>(&form))
    return nrhs <= 1 || !tridiag_rhs_breakdown(p->inner);
  return !std::holds_alternative<tridiag_pivot_plan>(form);
}

// --- The options ------------------------------------------------------------

// The plan of a request on a device of policy P:
// 1. refinement = mixed, and periodic systems with partial pivoting: the
//    pivoted form, which alone runs them;
// 2. partial pivoting on plain systems: Thomas's tile with the pivoted
//    elimination where the systems are short or few, else the pivoted form;
// 3. else the algorithm's no-pivot form (automatic resolved); periodic
//    systems through the Sherman-Morrison split around it (or the direct
//    form's periodic pass); under pivoting = automatic its screen, inside
//    the form where the form screens, else after it, or where it cannot be
//    after (in place) the bounded pivoted form alone.
template <class T, class P>
tridiag_choice plan_tridiag(tridiag_request const& rq, tridiag_device const& dev) {
  layout const& lay = rq.lay;
  auto solve = [&](tridiag_form f) { return tridiag_solve_plan{std::move(f), dev}; };
  bool const mixed = rq.refinement == tridiag_refinement::mixed;
  bool const partial = rq.pivoting == tridiag_pivoting::partial;
  if (lay.n <= 0 || lay.count <= 0)  // nothing to solve: the launch zeroes the outputs
    return {solve(tridiag_plan_global_thomas(P::system_threads)),
            mixed || partial || rq.algorithm == tridiag_algorithm::automatic ? tridiag_algorithm::thomas
                                                                             : rq.algorithm};
  if (mixed || (partial && rq.periodic))
    return {solve(tridiag_plan_pivot(P::system_threads, mixed)), tridiag_algorithm::thomas};
  if (partial) {
    bool const tile =
        lay.n * std::int64_t(sizeof(T)) <= P::partial_tile_bytes || lay.count <= P::partial_tile_count;
    if (auto pl = tile ? tridiag_plan_thomas_tile_for<T, P>(lay, dev.max_smem) : std::nullopt) {
      pl->solver = kernels::tile_solver::thomas_pivot;
      return {solve(*pl), tridiag_algorithm::thomas};
    }
    return {solve(tridiag_plan_pivot(P::system_threads, false)), tridiag_algorithm::thomas};
  }
  tridiag_algorithm const alg =
      rq.algorithm == tridiag_algorithm::automatic ? tridiag_resolve_automatic<T, P>(lay, dev) : rq.algorithm;
  auto form = tridiag_form_of<T, P>(lay, alg, dev);
  if (!form)
    return {{}, alg, alg == tridiag_algorithm::thomas_pcr ? "needs 4 <= n < 2^30" : "needs n < 2^30"};
  tridiag_solve_plan pl = solve(*form);
  pl.periodic = rq.periodic;
  if (rq.pivoting == tridiag_pivoting::automatic) {
    if (tridiag_form_screens(pl.form, rq.nrhs))
      pl.screen = tridiag_screen::inside;
    else if (rq.in_place)
      return {solve(tridiag_plan_pivot(P::system_threads, false, true, P::pivot_bounded_bytes)), alg};
    else
      pl.screen = tridiag_screen::after;
  }
  return {pl, alg};
}

// The same on the device's own policy.
template <class T>
tridiag_choice plan_tridiag(tridiag_request const& rq, tridiag_device const& dev) {
  return tridiag_with_policy<T>(dev.cc_major, [&]<class P>() { return plan_tridiag<T, P>(rq, dev); });
}

}  // namespace recur::detail
