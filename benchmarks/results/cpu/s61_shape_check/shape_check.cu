#include "cuda/engine/reduce.cuh"
#include "engine/plan.h"
#include <cstdio>
using namespace rk;
using namespace rk::eng;
int main() {
  const int64_t Ks[] = {1, 3, 100, 4224, 10000, 300000};
  const int64_t Ls[] = {1, 7, 31, 64, 65, 127, 1039, 2335, 4671, 16384, 100001, 1 << 22};
  const int elems[] = {1, 2, 4, 8};
  unsigned long long h = 1469598103934665603ull;
  auto mix = [&](long long v) { h = (h ^ (unsigned long long)v) * 1099511628211ull; };
  int n = 0;
  for (int sel = -1; sel <= 1; ++sel)
    for (int st = -1; st <= 1; ++st)
      for (int64_t K : Ks) for (int64_t L : Ls) for (int e : elems) for (int lpt : {0, 1, 2, 8}) for (int select = 0; select < 2; ++select) {
        TuningOverrides o{}; o.rows_select = sel; o.rows_stripes = st;
        Shape s = rows_step_shape(K, L, e, lpt, select, 132, o);
        mix(s.W); mix(s.nseg); mix(s.LPT); mix(s.stripes); mix(s.select_rows); mix(s.blocks); mix(s.partials);
        mix(step_depth(L, e));
        for (int b = 0; b < 2; ++b) {
          Shape c = columns_shape(K, L, 37 + L % 5, e, b, select, 132, o);
          mix(c.TX); mix(c.TY); mix(c.TB); mix(c.LPT); mix(c.tiles_x); mix(c.tiles_y); mix(c.blocks); mix(c.partials); mix((int)c.loads);
        }
        ++n;
      }
  for (int e : {2, 4, 8}) for (int64_t lanes : {1, 2, 3, 4, 5, 100, 4000}) for (int64_t K : Ks) { mix(rows_select_pays(K, lanes, e, 132)); mix(select_rows_threads(lanes)); }
  for (int e : {1, 2, 4, 8}) for (int64_t l : {1, 100, 180, 181, 300}) for (int s = 0; s < 2; ++s) for (int w = 0; w < 2; ++w) mix(ops_rows_lanes_per_thread(e, s, w, l));
  printf("%d cases, hash %016llx\n", n, h);
}
