#pragma once
// How warps share the DP grid: each warp owns a strip of 32 rows of one pair and walks across its
// columns on a skewed anti-diagonal (lane l at step t holds column t - l). Strips are handed out
// by an atomic ticket in dependency order, so a warp only ever waits on a strip whose ticket was
// taken earlier, by a warp that is already running: no deadlock for any grid size. (In the
// forward a strip also waits for its cost tiles: it stages those that no running warp has claimed.)
// Tickets take the strips of up to kInterleavedPairs pairs row by row (strip 0 of each, then strip
// 1, ...), so a strip starts long after the one it waits on, which has run ahead by then.
// Borders between strips travel through a ring of slots in global memory whose words validate
// themselves (a sealed value is never 0; a consumer polls the words it needs, 8 columns at a
// time, and zeroes them once read). A per-strip progress counter says when a strip is done
// (ring slots are reused, the gradient's tiles read E, only after that).
#include <cuda/atomic>

#include <cstdint>

#include "sdtw/kernels/constraint.hpp"

namespace sdtw::kernels::detail {

constexpr int kWarp = 32;
constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kDone = 0x7fffffff;  // progress of a finished strip
constexpr int kClaimed = 1;        // progress of a strip whose reused ring slot is free to write (claim_slot)
constexpr int kBorderPiece = 8;  // border columns a consumer waits for at once
constexpr int64_t kInterleavedPairs = 1024;

struct Schedule {
  int64_t batch, n, m;
  int64_t strips;      // strips per pair, ceil(n / 32)
  int64_t ring_slots;  // per pair: strips take slots round-robin in their order of work
  const int64_t* x_len;
  const int64_t* y_len;
  int64_t bandwidth;  // < 0: no band
  unsigned long long* ticket;
  int* progress;  // one per strip (batch * strips)
  int* staged;    // one per strip: cost tiles staged into its state (forward), right after progress
  unsigned* tile_claims;  // forward: one per cost tile (strip-major), set by the warp that stages it
  const int64_t* x_index = nullptr;  // pair b compares x[x_index[b]] with y[y_index[b]]; null: b
  const int64_t* y_index = nullptr;
  // tslearn's Sakoe-Chiba or Itakura (the kernels' kShaped instantiations read it; the band is bandwidth).
  Constraint constraint = {};
  // The first strip of the launch: a checkpointed backward runs one band of strips at a time, with
  // strips (and the state, ring and counters) counted from it; the rows stay the pair's own. Its
  // kernels pass it to locate_strip; the others pass 0, a constant.
  int64_t strip0 = 0;

  static __device__ int64_t clamp_length(int64_t length, int64_t full) { return max(int64_t{1}, min(length, full)); }
  __host__ __device__ int64_t total() const { return batch * strips; }
  // Lengths fit in int, so the per-step index math stays 32-bit. Lengths on the device are not
  // validated (that would sync): out-of-range ones are clamped to [1, n] so memory stays in bounds.
  __device__ int rows_of(int64_t b) const {
    return static_cast<int>(x_len ? clamp_length(x_len[x_index ? x_index[b] : b], n) : n);
  }
  __device__ int cols_of(int64_t b) const {
    return static_cast<int>(y_len ? clamp_length(y_len[y_index ? y_index[b] : b], m) : m);
  }
};

__device__ inline int64_t take_ticket(unsigned long long* counter) {
  unsigned long long t = 0;
  if ((threadIdx.x & 31) == 0) t = atomicAdd(counter, 1ull);
  return static_cast<int64_t>(__shfl_sync(kFullMask, t, 0));
}

__device__ inline void publish(int* progress, int value) {
  cuda::atomic_ref<int, cuda::thread_scope_device> p(*progress);
  p.store(value, cuda::memory_order_release);
}

// Spins until *progress >= needed. The load is relaxed: a caller that then reads what the release
// store published fences itself. sleep_ns: the pause between two loads.
__device__ inline void wait_for(int* progress, int needed, unsigned sleep_ns = 64) {
  cuda::atomic_ref<int, cuda::thread_scope_device> p(*progress);
  int seen = 0;
  while (seen < needed) {
    seen = p.load(cuda::memory_order_relaxed);
    if (seen < needed) __nanosleep(sleep_ns);
  }
}

// A ring word holds its value's bits XOR a signalling NaN, which no arithmetic result is (a NaN
// result is quiet), so a sealed word is never 0 and 0 means 'not written yet'. The forward's
// memset zeroes the ring and a consumer zeroes every word it has read, so every launch leaves the
// ring zero. Relaxed loads and stores at device scope: the word is its own flag, no fence.
constexpr uint64_t kSeal64 = 0x7ff0000000000001ull;
constexpr uint32_t kSeal32 = 0x7f800001u;
__device__ inline uint64_t seal(double v) { return static_cast<uint64_t>(__double_as_longlong(v)) ^ kSeal64; }
__device__ inline double unseal(uint64_t w) { return __longlong_as_double(static_cast<long long>(w ^ kSeal64)); }
__device__ inline uint64_t seal(float lo, float hi) {
  return static_cast<uint64_t>(__float_as_uint(lo) ^ kSeal32) | static_cast<uint64_t>(__float_as_uint(hi) ^ kSeal32) << 32;
}
__device__ inline void unseal(uint64_t w, float& lo, float& hi) {
  lo = __uint_as_float(static_cast<uint32_t>(w) ^ kSeal32);
  hi = __uint_as_float(static_cast<uint32_t>(w >> 32) ^ kSeal32);
}
__device__ inline uint64_t ring_load(const uint64_t* word) {
  uint64_t w;
  asm volatile("ld.relaxed.gpu.global.b64 %0, [%1];" : "=l"(w) : "l"(word));
  return w;
}
// A predicated store (no branch in a chunk's body).
__device__ inline void ring_store(uint64_t* word, uint64_t w, bool when) {
  asm volatile("{ .reg .pred p; setp.ne.u32 p, %2, 0; @p st.relaxed.gpu.global.b64 [%0], %1; }" ::"l"(word), "l"(w),
               "r"(static_cast<unsigned>(when)));
}

// Before step `first` of a chunk: waits until the lanes [first, first + kBorderPiece) of `ready`
// are set, trying `take` (a load of the lane's border words; true once they are sealed) on every
// lane not yet set. Returns the new mask. Warp-uniform: a branch, and a loop only while waiting.
template <typename Take>
__device__ inline uint32_t await_border(uint32_t ready, int first, Take&& take) {
  const uint32_t piece = static_cast<uint32_t>(((1ull << kBorderPiece) - 1ull) << first);
  const int lane = threadIdx.x & 31;
  while ((ready & piece) != piece) {
    ready = __ballot_sync(kFullMask, ((ready >> lane) & 1u) || take());
    if ((ready & piece) != piece) __nanosleep(32);
  }
  return ready;
}

// Each pair has its own ring, so pairs never wait on each other. The strip at position `order` in
// its pair's work order writes slot order % ring_slots once the reader of that slot's previous
// content (position order - ring_slots + 1) has finished; returns the slot. The last strip of the
// order writes no border, so it waits for no slot. `id` = b * strips + order indexes the progress
// counters. A reused slot still holds its previous border until that reader has zeroed it, so the
// writer then publishes kClaimed, which its own reader awaits (await_claim) before polling.
__device__ inline int64_t claim_slot(const Schedule& s, int64_t id, int64_t b, int64_t order) {
  const bool writes = order < s.strips - 1;
  if ((threadIdx.x & 31) == 0 && writes && order >= s.ring_slots) {
    wait_for(s.progress + (id - s.ring_slots + 1), kDone);
    // The reader zeroed the slot's words before its release of kDone: they land before ours.
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
    publish(s.progress + id, kClaimed);
  }
  __syncwarp();
  return b * s.ring_slots + order % s.ring_slots;
}

// Before a strip polls the slot it reads: if that slot is reused (the writer's order is
// ring_slots or more), waits until the writer has claimed it, so that the words it finds are the
// writer's or zero, never the slot's previous border.
__device__ inline void await_claim(const Schedule& s, int64_t id, int64_t order) {
  if ((threadIdx.x & 31) == 0 && order - 1 >= s.ring_slots) {
    wait_for(s.progress + id - 1, kClaimed);
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  }
  __syncwarp();
}

// Waits until *counter >= needed (lane 0 polls, sleep_ns apart), then reads what was published before it.
__device__ inline void await_count(int* counter, int needed, unsigned sleep_ns = 64) {
  if ((threadIdx.x & 31) == 0) {
    wait_for(counter, needed, sleep_ns);
    cuda::atomic_thread_fence(cuda::memory_order_acquire, cuda::thread_scope_device);
  }
  __syncwarp();
}

// The slot of the strip just before in the pair's work order (valid when order > 0).
__device__ inline int64_t previous_slot(const Schedule& s, int64_t b, int64_t order) {
  return b * s.ring_slots + (order + s.ring_slots - 1) % s.ring_slots;
}

// What a warp knows about the strip its ticket names. `order` is the strip's position in its
// pair's work order; the forward walks strips top-down (k = order), the backward bottom-up. The
// strip's progress counter is progress[id]; it waits on progress[id - 1] only for the claim of a
// reused ring slot (await_claim) and on progress[id - ring_slots + 1] before reusing one (claim_slot).
struct Strip {
  int64_t id, b, order, k;
  int rows, cols, row0;
  int64_t slot, previous;  // ring slots written and read (previous is valid when order > 0)
};

// Fills the strip's place (pair, order, rows, lengths) for the ticket, not its ring slots; returns
// false when the strip lies wholly below the pair's last row and has nothing to do.
__device__ inline bool locate_strip(const Schedule& s, int64_t ticket, bool bottom_up, Strip& strip, int64_t strip0 = 0) {
  const int64_t group = min(s.batch, kInterleavedPairs), group_tickets = group * s.strips;
  const int64_t first = ticket / group_tickets * group, within = ticket % group_tickets;
  const int64_t pairs = min(group, s.batch - first);  // the last group may be smaller
  strip.b = first + within % pairs;
  strip.order = within / pairs;
  strip.id = strip.b * s.strips + strip.order;
  strip.k = bottom_up ? s.strips - 1 - strip.order : strip.order;
  strip.rows = s.rows_of(strip.b);
  strip.cols = s.cols_of(strip.b);
  strip.row0 = static_cast<int>(strip0 + strip.k) * kWarp;
  return strip.row0 < strip.rows;
}

// Fills `strip` for the ticket; returns false (after marking the strip done) when the strip lies
// wholly below the pair's last row and has nothing to do.
__device__ inline bool begin_strip(const Schedule& s, int64_t ticket, bool bottom_up, Strip& strip, int64_t strip0 = 0) {
  if (!locate_strip(s, ticket, bottom_up, strip, strip0)) {
    if ((threadIdx.x & 31) == 0) publish(s.progress + strip.id, kDone);
    return false;
  }
  strip.slot = claim_slot(s, strip.id, strip.b, strip.order);
  strip.previous = previous_slot(s, strip.b, strip.order);
  return true;
}

// The ticket of the gradient's tiles in a backward that computes them in the same launch, and of
// the cost tiles in a forward that saves state; it sits beside the strips' ticket and the count of
// finished warps. (The forward's tile claims are left set: the next forward's memset clears them.)
__device__ inline unsigned long long* tile_ticket(const Schedule& s) { return s.ticket + 2; }

// Programmatic dependent launch (sm_90 and later; elsewhere the launches stay in stream order): a
// kernel lets the one launched after it with programmatic serialization start at once, and that one
// waits for it to finish (and its memory to be visible) before it ends itself.
__device__ inline void allow_dependent_launch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ inline void await_primary_launch() {
#if __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Called by every warp once it has no ticket left. The last warp of the grid to get here puts the
// scratch back to zero (tickets, progress and staged-tile counters, this count), so the launch after
// it on the same workspace (the backward after the forward) needs no memset. The count sits beside
// the ticket.
__device__ inline void finish_launch(const Schedule& s) {
  const int lane = threadIdx.x & 31;
  auto* finished = reinterpret_cast<unsigned*>(s.ticket + 1);
  unsigned last = 0;
  __syncwarp();  // every lane's progress stores (lane 31 publishes in the forward) before lane 0's fence
  if (lane == 0) {
    __threadfence();  // this warp's progress stores land before its count
    last = atomicAdd(finished, 1u) + 1 == gridDim.x * (blockDim.x / kWarp);
  }
  if (!__shfl_sync(kFullMask, last, 0)) return;
  __threadfence();
  __syncwarp();
  const int64_t counters = 2 * s.total(), quads = counters / 4;  // progress, then staged
  for (int64_t k = lane; k < quads; k += kWarp) reinterpret_cast<int4*>(s.progress)[k] = make_int4(0, 0, 0, 0);
  for (int64_t k = quads * 4 + lane; k < counters; k += kWarp) s.progress[k] = 0;
  if (lane == 0) {
    *s.ticket = 0;
    *tile_ticket(s) = 0;
    *finished = 0;
  }
}

}  // namespace sdtw::kernels::detail
