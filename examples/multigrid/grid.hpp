#pragma once
// The model problem's grids and the operations on them other than line
// solves, for either space (space.hpp): CPU loops in grid_host.cpp, CUDA
// kernels in grid_cuda.cu.
//
// -div(K grad u) = f on the unit square, u = 0 on its boundary, K = diag(1,
// eps), discretised by central differences on nx x ny points (the boundary
// included), spacings hx = 1/(nx-1) and hy = 1/(ny-1). The unknowns are the
// mx x my interior points, mx = nx - 2, my = ny - 2, stored row by row:
// u[j * mx + i] is the point (x, y) = ((i + 1) hx, (j + 1) hy). The
// five-point operator is
//
//   (A u)_ij = 2 (cx + cy) u_ij - cx (u_i-1,j + u_i+1,j) - cy (u_i,j-1 + u_i,j+1),
//   cx = 1 / hx^2,  cy = eps / hy^2,
//
// with u = 0 outside the interior. Anisotropy is the ratio cy / cx: from
// eps, from the aspect ratio hx / hy of the cells, or both.
//
// The residual forms A u from differences of neighbours, cx ((u_ij -
// u_i-1,j) - (u_i+1,j - u_ij)) + cy (...): for a smooth u neighbours lie
// within a factor 2 of each other, so the differences are exact (Sterbenz)
// and the rounding error is relative to the second differences. Written as
// 2 (cx + cy) u_ij - ..., its rounding error is eps cx |u| and follows u,
// and the corrections it causes become an error in u of that size: float's
// V-cycles then stop at an error of 5e-2 on a 1025 x 1025 grid (eps =
// 1e-3), against the discretisation error 3.6e-6 they reach this way.
//
// However it is formed, the residual of the computed u cannot fall much
// below eps 4 (cx + cy) |u|, u rounded to the type: in double, about 1.5e-10
// of the initial residual on a 4097 x 4097 grid, 4 times less per halving of
// the grid.
#include <cstddef>
#include <cstdint>

#include <recur/layout/layout.hpp>

namespace recur_examples {

class cuda_space;
struct host_space;

struct grid {
  std::int64_t mx = 1, my = 1;  // interior points along x and y
  double cx = 1, cy = 1;        // the couplings along x and y

  std::int64_t size() const { return mx * my; }
  double diagonal() const { return 2 * (cx + cy); }
  // One line of unknowns: A is tridiagonal, and one line solve is exact.
  bool coarsest() const { return mx == 1 || my == 1; }
  // Every second interior point, the spacings doubled: mx = 2 MX + 1.
  grid coarse() const { return {(mx - 1) / 2, (my - 1) / 2, cx / 4, cy / 4}; }
  recur::layout x_lines() const { return recur::layout::contiguous(mx, my); }
  recur::layout y_lines() const { return recur::layout::interleaved(my, mx); }
};

// Every operation is queued on the space (cuda_space: its stream) except
// defect, which waits for its result. T is float or double.

// r = f - A u.
template <class T>
void residual(host_space const&, grid const& g, T const* u, T const* f, T* r);
template <class T>
void residual(cuda_space const&, grid const& g, T const* u, T const* f, T* r);

// d = s (f - A u), the residual computed in T and rounded to U after the
// scaling (the mixed-precision scheme's defect: double to float in one
// pass); returns sum (f - A u)^2, accumulated in double in an order that
// depends only on the grid: the same bits from run to run.
template <class T, class U>
double defect(host_space const&, grid const& g, T const* u, T const* f, double s, U* d);
template <class T, class U>
double defect(cuda_space const&, grid const& g, T const* u, T const* f, double s, U* d);

// fc = R r, full weighting (1/16 [1 2 1; 2 4 2; 1 2 1]) onto g.coarse().
template <class T>
void restrict_full_weighting(host_space const&, grid const& fine, T const* r, T* fc);
template <class T>
void restrict_full_weighting(cuda_space const&, grid const& fine, T const* r, T* fc);

// u += P ec, bilinear interpolation from g.coarse() (the transpose of
// restriction, times 4).
template <class T>
void prolongate_add(host_space const&, grid const& fine, T const* ec, T* u);
template <class T>
void prolongate_add(cuda_space const&, grid const& fine, T const* ec, T* u);

// y = a x; y += a x (x and y may differ in type: the mixed-precision
// scheme's correction, float, added to u, double); y = v.
template <class T>
void scale_copy(host_space const&, std::int64_t n, double a, T const* x, T* y);
template <class T>
void scale_copy(cuda_space const&, std::int64_t n, double a, T const* x, T* y);
template <class T, class U>
void axpy(host_space const&, std::int64_t n, double a, T const* x, U* y);
template <class T, class U>
void axpy(cuda_space const&, std::int64_t n, double a, T const* x, U* y);
template <class T>
void fill(host_space const&, std::int64_t n, T v, T* y);
template <class T>
void fill(cuda_space const&, std::int64_t n, T v, T* y);

// The explicit instantiations of every operation on Space, for the file
// that defines them: float and double, and the type pairs of defect and
// axpy.
#define RECUR_EXAMPLES_GRID_OPS_(Space, T)                                           \
  template void residual<T>(Space const&, grid const&, T const*, T const*, T*);      \
  template void restrict_full_weighting<T>(Space const&, grid const&, T const*, T*); \
  template void prolongate_add<T>(Space const&, grid const&, T const*, T*);          \
  template void scale_copy<T>(Space const&, std::int64_t, double, T const*, T*);     \
  template void fill<T>(Space const&, std::int64_t, T, T*);
#define RECUR_EXAMPLES_MIXED_OPS_(Space, T, U)                                             \
  template double defect<T, U>(Space const&, grid const&, T const*, T const*, double, U*); \
  template void axpy<U, T>(Space const&, std::int64_t, double, U const*, T*);
#define RECUR_EXAMPLES_GRID_INSTANCES(Space)       \
  RECUR_EXAMPLES_GRID_OPS_(Space, float)           \
  RECUR_EXAMPLES_GRID_OPS_(Space, double)          \
  RECUR_EXAMPLES_MIXED_OPS_(Space, float, float)   \
  RECUR_EXAMPLES_MIXED_OPS_(Space, double, double) \
  RECUR_EXAMPLES_MIXED_OPS_(Space, double, float)

}  // namespace recur_examples
