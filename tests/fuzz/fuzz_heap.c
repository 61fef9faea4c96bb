/* SPDX-License-Identifier: MIT */
/* A coverage-guided fuzzer of the whole manager, checked against a shadow model.
 *
 * The input is a program: each operation is an opcode byte and its arguments (a slot, a size
 * selector). Operations run over a table of SLOTS live blocks: GetMem, AllocMem, FreeMem,
 * ReallocMem (through the C exports, Delphi's record, its bound form and Free Pascal's record,
 * negative sizes included), large blocks resized by random amounts, modes nested and left while
 * blocks live, pending frees processed and free memory released mid-program,
 * the usable size, interior and stale pointers, interior pointers under forged small headers,
 * impossible sizes, a memory usage limit that
 * makes the OS mappings fail, and the consistency walk. Sizes come from a table of the policy
 * boundaries (every small class edge, the small/medium and medium/large edges, the in-place
 * ReallocMem limits, span sizes, large granularity edges), from raw bytes, and from the
 * block's own usable size (the in-place downsize rules: new*4 + 64 >= usable, new >= usable/2).
 *
 * The shadow model knows, for every live block, its pointer, its usable size and how many of
 * its first bytes hold its pattern. After every operation:
 *   - contents are preserved byte for byte across ReallocMem (the first min(valid, new) bytes);
 *   - AllocMem's bytes are zero;
 *   - fastmm_usable_size() >= the request, and stable between resizes; owns_block agrees;
 *   - no two live blocks overlap ([p, p + usable) against every other live block);
 *   - a pointer that is not a live block (interior, stale, foreign) is refused by FreeMem,
 *     ReallocMem, usable_size and owns_block, and the heap is unchanged; so is an interior
 *     pointer of a live block under a small header the program wrote in front of it (naming
 *     the block's own span with its class and slot, copied from a live block, or any bits with
 *     the kind SMALL: the validation contract, docs/architecture-reference.md), and ReallocMem is
 * asked for sizes that header's own numbers would keep in place;
 *   - ReallocMem that fails returns NULL and leaves the old block intact (only allowed while
 *     a memory usage limit is set);
 *   - the bound records hand a pointer to the previous manager exactly when it lies in no
 *     memory of ours, report the others (FreeMem's result, heap_error 204), never a live block;
 *   - fastmm_check_heap() == 0 on a schedule (CHECK_FIRST) and at the end;
 *   - at the end of every input, once everything is freed: no block in use of any kind, no
 *     block cached; for short inputs and one in DEEP_END_EVERY, after a release, the OS bytes
 *     back to exactly where the first input started.
 * Any violation prints what it saw and aborts (libFuzzer keeps the input as a crash artifact).
 *
 * Pattern bytes are all odd: a header word built from a program's data then always has the
 * FREE bit set, so the stale, interior and foreign pointers above meet free-looking headers;
 * the forged-header operation writes live-looking ones on purpose.
 *
 * Built two ways (tests/fuzz/CMakeLists.txt): with libFuzzer (clang, native-asan preset), and
 * with replay_main.c, which runs the seed corpus as a plain regression test on every preset,
 * Wine included. */
#if !defined(_WIN32) && !defined(_POSIX_C_SOURCE)
#define _POSIX_C_SOURCE 200809L /* pipe, for byte_readable */
#endif
#include "test_util.h"
#if !defined(_WIN32)
#include <unistd.h>
#endif

#include "core/block_header.h"
#include "core/policy.h"
#include "fastmm.h"
#include "fuzz/fuzz_counts.h"

#define SLOTS 48
#define STALE_RING 32
#define MAX_OPS 4096
#define FUZZ_LARGE_CAP ((size_t)4 * 1024 * 1024) /* the biggest block the fuzzer asks for */
#define FUZZ_GROW_CAP ((size_t)8 * 1024 * 1024)  /* the large in-place growth goes this far */
#define QUICK_CHECK_BYTES 4096                   /* periodic checks look at each end of a block */
/* The periodic check (every slot's ends and fastmm_check_heap) runs every CHECK_FIRST
 * operations up to CHECK_DENSE_UNTIL, then at doubling intervals: a fault shows at the next
 * check, so short programs are checked densely and long ones do not spend their time checking
 * (fastmm_check_heap walks every span). Each block is also checked whole before it is freed or
 * resized, and everything at the end of the input. */
#define CHECK_FIRST 16
#define CHECK_DENSE_UNTIL 64
/* The end of an input always frees every block, leaves the modes and checks that nothing is in
 * use or cached. The deep end also releases the free memory and checks the OS bytes are back
 * to the first input's, and scans the debug blocks: for short inputs (the minimised crashes
 * and the hand-made seeds) and for one input in DEEP_END_EVERY, chosen by the input's hash so
 * that a replay decides as the fuzzing run did. The release unmaps what the next input maps
 * again (page faults on fresh memory were a fifth of the time). */
#define DEEP_END_OPS 64
#define DEEP_END_EVERY 16

/* ---- failure ------------------------------------------------------------------------------ */

static unsigned long op_index;
static const char *op_name = "start";

/* Operations and inputs run by this process, for the campaign (scripts/fuzz-campaign.sh): the
 * file FASTMM_FUZZ_COUNT_FILE names, if set, is rewritten with "operations inputs" at exit,
 * every 2^20 operations and before a failed check aborts; stderr gets them at exit. */
static unsigned long long total_ops, total_inputs, counts_written;

static void write_counts(void) {
  fuzz_write_counts(total_ops, total_inputs);
  counts_written = total_ops;
}

static void report_counts(void) {
  fprintf(stderr, "fuzz_heap: %llu operations in %llu inputs\n", total_ops, total_inputs);
  write_counts();
}

#if defined(__MINGW_PRINTF_FORMAT)
__attribute__((noreturn, format(__MINGW_PRINTF_FORMAT, 3, 4)))
#elif defined(__GNUC__)
__attribute__((noreturn, format(printf, 3, 4)))
#endif
static void
fuzz_fail(const char *file, int line, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "%s:%d: fuzz_heap: operation %lu (%s): ", file, line, op_index, op_name);
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  fflush(stderr);
  write_counts();
  abort();
}

#define FUZZ_CHECK(cond, ...)                                                                      \
  do {                                                                                             \
    if (!(cond))                                                                                   \
      fuzz_fail(__FILE__, __LINE__, __VA_ARGS__);                                                  \
  } while (0)

/* ---- the pattern: ref[(seed + i) % REF_LEN], every byte odd --------------------------------- */

#define REF_LEN 65521u /* prime, so blocks with different seeds differ at every offset */
static unsigned char ref[2 * REF_LEN];

static void ref_init(void) {
  uint32_t x = 0x12345678u;
  size_t i;
  for (i = 0; i < REF_LEN; i++) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    ref[i] = (unsigned char)(x | 1u);
  }
  memcpy(ref + REF_LEN, ref, REF_LEN);
}

static void pattern_fill(unsigned char *p, size_t from, size_t to, uint32_t seed) {
  while (from < to) {
    size_t start = (seed + from) % REF_LEN, n = to - from;
    if (n > REF_LEN)
      n = REF_LEN;
    memcpy(p + from, ref + start, n);
    from += n;
  }
}

/* Offset of the first byte in [0, n) that is not the pattern, or (size_t)-1. */
static size_t pattern_check(const unsigned char *p, size_t n, uint32_t seed) {
  size_t from = 0;
  while (from < n) {
    size_t start = (seed + from) % REF_LEN, len = n - from, i;
    if (len > REF_LEN)
      len = REF_LEN;
    if (memcmp(p + from, ref + start, len) != 0) {
      for (i = 0; i < len; i++)
        if (p[from + i] != ref[start + i])
          return from + i;
    }
    from += len;
  }
  return (size_t)-1;
}

/* 1 if n bytes at p are zero: memcmp against a zero buffer, not a byte loop (the harness is
 * compiled with comparison tracing under libFuzzer, and AllocMem blocks reach megabytes). */
static const unsigned char zeros[65536];
static int all_zero(const unsigned char *p, size_t n) {
  while (n > 0) {
    size_t len = n < sizeof zeros ? n : sizeof zeros;
    if (memcmp(p, zeros, len) != 0)
      return 0;
    p += len;
    n -= len;
  }
  return 1;
}

/* ---- the shadow model ---------------------------------------------------------------------- */

typedef struct slot {
  unsigned char *p; /* NULL: empty */
  size_t request;   /* the size last asked for */
  size_t usable;    /* fastmm_usable_size when it was last allocated or resized */
  size_t valid;     /* the first `valid` bytes hold the pattern of `seed` */
  uint32_t seed;
} slot;

static slot slots[SLOTS];
static void *stale[STALE_RING]; /* pointers that were freed or moved away from */
static unsigned stale_next;
static int limit_set;
/* The modes' nesting depths as the program left them (each enter is matched by an exit). */
static unsigned debug_depth, erase_freed_depth, erase_allocated_depth;
#define MODE_DEPTH_MAX 3u
static uint32_t seed_counter;

/* The entry points a block goes through: the C exports, Delphi's record
 * (fastmm_get_memory_manager, the same as fastmm_get_memory_manager_debug's), Delphi's record
 * bound to a previous manager (fastmm_get_memory_manager_with_previous) and Free Pascal's,
 * which is always bound (fastmm_get_fpc_memory_manager). */
enum { VIA_C, VIA_DELPHI, VIA_DELPHI_BOUND, VIA_FPC, VIA_COUNT };
static const char *const via_name[VIA_COUNT] = {"C", "Delphi", "bound Delphi", "Free Pascal"};
static fastmm_memory_manager_ex delphi, delphi_bound;

/* The previous managers of the bound records only count: a pointer that is not a live block
 * must reach them exactly when it lies in no memory of ours, and be reported (Free Pascal: 204
 * through heap_error, which here returns; Delphi: FreeMem's result, ReallocMem's heap_error)
 * exactly when it does. Out of memory is 203 through Free Pascal's heap_error unless
 * ReturnNilIfGrowHeapFails (fpc_return_nil) is set. */
static fastmm_fpc_memory_manager fpc;
static unsigned previous_calls, errors_203, errors_204;
static uint8_t fpc_return_nil = 0, fpc_yes = 1;
static size_t FASTMM_DELPHI_CALL fpc_prev_free(void *p) {
  (void)p;
  previous_calls++;
  return 0;
}
static void *FASTMM_DELPHI_CALL fpc_prev_realloc(void **p, size_t n) {
  (void)n;
  previous_calls++;
  return *p;
}
static void *FASTMM_DELPHI_CALL fpc_prev_get(size_t n) {
  (void)n;
  previous_calls++;
  return NULL;
}
static int32_t FASTMM_DELPHI_CALL delphi_prev_free(void *p) {
  (void)p;
  previous_calls++;
  return 0;
}
static void *FASTMM_DELPHI_CALL delphi_prev_realloc(void *p, intptr_t n) {
  (void)n;
  previous_calls++;
  return p;
}
static void FASTMM_CDECL pascal_heap_error(int32_t code, const void *address) {
  (void)address;
  if (code == 203)
    errors_203++;
  else if (code == 204)
    errors_204++;
  else
    fprintf(stderr, "fuzz_heap: heap_error(%d)\n", (int)code), abort();
}

/* Reader of the input. Past its end it returns zeros, so every input is a whole program. */
typedef struct reader {
  const uint8_t *data;
  size_t size, at;
} reader;

static unsigned rd8(reader *r) {
  return r->at < r->size ? r->data[r->at++] : 0u;
}
static unsigned rd16(reader *r) {
  unsigned lo = rd8(r);
  return lo | rd8(r) << 8;
}
static uint32_t rd24(reader *r) {
  uint32_t lo = rd16(r);
  return lo | (uint32_t)rd8(r) << 16;
}

/* ---- sizes --------------------------------------------------------------------------------- */

static size_t boundaries[256];
static size_t boundary_count;

static void add_boundary(size_t s) {
  if (boundary_count < sizeof boundaries / sizeof boundaries[0])
    boundaries[boundary_count++] = s;
}

static void boundaries_init(void) {
  size_t i, slot_size, k;
  static const size_t fixed[] = {
      0,
      1,
      2,
      7,
      8,
      15,
      16,
      17,
      /* small / medium edge */
      SMALL_MAX_USER - 1,
      SMALL_MAX_USER,
      SMALL_MAX_USER + 1,
      MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE - 1,
      MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE,
      MEDIUM_MIN_BLOCK_SIZE - MEDIUM_HEADER_SIZE + 1,
      MEDIUM_MIN_BLOCK_SIZE,
      /* below it a medium downsize moves to a small block (half the smallest medium block) */
      REALLOC_MEDIUM_TO_SMALL_BELOW - 1,
      REALLOC_MEDIUM_TO_SMALL_BELOW,
      REALLOC_MEDIUM_TO_SMALL_BELOW + 1,
      /* small span sizes */
      SMALL_SPAN_MIN_BYTES - MEDIUM_HEADER_SIZE,
      SMALL_SPAN_MIN_BYTES,
      SMALL_SPAN_MAX_BYTES - MEDIUM_HEADER_SIZE,
      SMALL_SPAN_MAX_BYTES,
      SMALL_SPAN_MAX_BYTES + 1,
      /* medium / large edge */
      MEDIUM_MAX_USER - 16,
      MEDIUM_MAX_USER - 1,
      MEDIUM_MAX_USER,
      MEDIUM_MAX_USER + 1,
      MEDIUM_MAX_BLOCK_SIZE,
      MEDIUM_MAX_BLOCK_SIZE + 1,
      /* a whole medium span, and just past it */
      MEDIUM_SPAN_SIZE / 2,
      MEDIUM_SPAN_SIZE - 64 - MEDIUM_HEADER_SIZE - 16,
      MEDIUM_SPAN_SIZE - 64,
      MEDIUM_SPAN_SIZE,
      MEDIUM_SPAN_SIZE + 1,
      /* large granularity edges: the mapping is user + 64 rounded up to 64 KB */
      LARGE_GRANULARITY * 9 - LARGE_HEADER_SIZE,
      LARGE_GRANULARITY * 9 - LARGE_HEADER_SIZE + 1,
      LARGE_GRANULARITY * 16 - LARGE_HEADER_SIZE,
      LARGE_GRANULARITY * 16 - LARGE_HEADER_SIZE + 1,
      LARGE_GRANULARITY * 40 - LARGE_HEADER_SIZE - 1,
      4u * 1024u * 1024u,
  };
  for (i = 0; i < sizeof fixed / sizeof fixed[0]; i++)
    add_boundary(fixed[i]);
  /* Every small class: its usable size, one more, and the in-place downsize edge
   * (new*4 + 64 >= usable) on both sides. */
  for (i = 0; (slot_size = fastmm_small_class_slot_size(i)) != 0; i++) {
    size_t usable = slot_size - BLOCK_HEADER_SIZE;
    add_boundary(usable);
    add_boundary(usable + 1);
    k = usable > REALLOC_SMALL_DOWNSIZE_ADDER
            ? (usable - REALLOC_SMALL_DOWNSIZE_ADDER) >> REALLOC_SMALL_DOWNSIZE_SHIFT
            : 0;
    add_boundary(k);
    if (k > 0)
      add_boundary(k - 1);
  }
}

/* A size for slot `s` (which may be empty). */
static size_t pick_size(reader *r, const slot *s) {
  unsigned how = rd8(r);
  size_t u = s->p ? s->usable : 256;
  switch (how % 10) {
  case 0:
  case 1:
    return boundaries[rd8(r) % boundary_count];
  case 2:
    return rd16(r) % (SMALL_MAX_USER + 64);
  case 3:
    return rd24(r) % (MEDIUM_MAX_USER + 4096);
  case 4: /* large: mostly near the medium edge, sometimes megabytes. Each byte of a block is
           * written and checked, so an operation costs what its block holds: the distance from
           * the edge is shifted right by 0..7 bits (log-uniform), every size still reachable. */
    return MEDIUM_MAX_USER + 1 +
           (rd24(r) % ((how & 0x10) ? FUZZ_LARGE_CAP - MEDIUM_MAX_USER : 8u * LARGE_GRANULARITY) >>
            (how >> 5));
  case 5: { /* around the current usable size */
    int delta = (int)(int8_t)rd8(r);
    size_t d = (size_t)(delta < 0 ? -delta : delta) * ((how >> 4) + 1u);
    return delta < 0 ? (d > u ? 0 : u - d) : u + d;
  }
  case 6: { /* the small in-place downsize edge of the current block */
    size_t k = u > REALLOC_SMALL_DOWNSIZE_ADDER
                   ? (u - REALLOC_SMALL_DOWNSIZE_ADDER) >> REALLOC_SMALL_DOWNSIZE_SHIFT
                   : 0;
    return k + (how >> 4) % 3 - (k > 0 ? 1 : 0);
  }
  case 7: { /* half the current usable size, the medium and large in-place downsize edge */
    size_t h = u / 2;
    return h + (how >> 4) % 3 - (h > 0 ? 1 : 0);
  }
  case 8: /* growth by the policy's factors and a bit */
    return u + u / 4 + (how >> 4);
  default:
    return rd8(r) % 64;
  }
}

static size_t size_cap(size_t n, size_t cap) {
  return n > cap ? cap : n;
}

/* ---- checks -------------------------------------------------------------------------------- */

static void check_slot(const slot *s, const char *what) {
  size_t bad, u;
  if (!s->p)
    return;
  u = fastmm_usable_size(s->p);
  FUZZ_CHECK(u == s->usable, "%s: usable_size(%p) = %zu, was %zu", what, (void *)s->p, u,
             s->usable);
  FUZZ_CHECK(fastmm_owns_block(s->p) == 1, "%s: owns_block(%p) = 0 for a live block", what,
             (void *)s->p);
  u = fpc.mem_size(s->p);
  FUZZ_CHECK(u == s->usable, "%s: Free Pascal MemSize(%p) = %zu, usable %zu", what, (void *)s->p, u,
             s->usable);
  bad = pattern_check(s->p, s->valid, s->seed);
  FUZZ_CHECK(bad == (size_t)-1, "%s: %zu-byte block %p broken at byte %zu of %zu", what, s->request,
             (void *)s->p, bad, s->valid);
}

/* Between operations: the usable size, ownership, and the pattern at both ends of the block
 * (where a neighbour's header or a stray write by the manager would land). */
static void quick_check_slot(const slot *s, const char *what) {
  size_t u, bad, tail;
  if (!s->p)
    return;
  if (s->valid <= 2 * QUICK_CHECK_BYTES) {
    check_slot(s, what);
    return;
  }
  u = fastmm_usable_size(s->p);
  FUZZ_CHECK(u == s->usable, "%s: usable_size(%p) = %zu, was %zu", what, (void *)s->p, u,
             s->usable);
  bad = pattern_check(s->p, QUICK_CHECK_BYTES, s->seed);
  FUZZ_CHECK(bad == (size_t)-1, "%s: block %p broken at byte %zu of %zu", what, (void *)s->p, bad,
             s->valid);
  tail = s->valid - QUICK_CHECK_BYTES;
  {
    /* The pattern at offset i is ref[(seed + i) % REF_LEN]: check the tail with the seed moved. */
    size_t bad2 =
        pattern_check(s->p + tail, QUICK_CHECK_BYTES, (uint32_t)((s->seed + tail) % REF_LEN));
    FUZZ_CHECK(bad2 == (size_t)-1, "%s: block %p broken at byte %zu of %zu", what, (void *)s->p,
               tail + bad2, s->valid);
  }
}

/* [p, p + usable) must not meet any other live block. */
static void check_no_overlap(const slot *s) {
  size_t i;
  uintptr_t a0 = (uintptr_t)s->p, a1 = a0 + s->usable;
  for (i = 0; i < SLOTS; i++) {
    const slot *o = &slots[i];
    uintptr_t b0, b1;
    if (o == s || !o->p)
      continue;
    b0 = (uintptr_t)o->p;
    b1 = b0 + o->usable;
    FUZZ_CHECK(a1 <= b0 || b1 <= a0, "blocks overlap: %p+%zu and %p+%zu", (void *)s->p, s->usable,
               (void *)o->p, o->usable);
  }
}

/* A block just handed out for `request` bytes: aligned, usable, not overlapping. */
static void adopt(slot *s, void *p, size_t request, int zeroed) {
  s->p = (unsigned char *)p;
  s->request = request;
  s->usable = fastmm_usable_size(p);
  FUZZ_CHECK(((uintptr_t)p & (BLOCK_ALIGNMENT - 1)) == 0, "%p is not 16-aligned", p);
  /* A debug block of 0 bytes has 0 usable bytes and is still a live block. */
  FUZZ_CHECK(s->usable >= request && (s->usable > 0 || fastmm_owns_block(p)),
             "usable_size(%p) = %zu < request %zu", p, s->usable, request);
  if (zeroed)
    FUZZ_CHECK(all_zero((const unsigned char *)p, request), "allocmem(%zu) = %p is not zeroed",
               request, p);
  check_no_overlap(s);
  s->seed = seed_counter++ * 7919u;
  s->valid = request;
  pattern_fill(s->p, 0, request, s->seed);
}

/* What each stale pointer was, for the message when one is not refused. */
typedef struct stale_note {
  unsigned long op;
  const char *op_name;
  size_t request, usable;
  int debug;
} stale_note;
static stale_note stale_notes[STALE_RING];

static void remember_stale(void *p) {
  stale_note *n = &stale_notes[stale_next % STALE_RING];
  size_t i;
  n->op = op_index;
  n->op_name = op_name;
  n->request = n->usable = 0;
  n->debug = fastmm_debug_mode_active();
  for (i = 0; i < SLOTS; i++)
    if (slots[i].p == p) { /* the block is freed already: its header is not read */
      n->request = slots[i].request;
      n->usable = slots[i].usable;
    }
  stale[stale_next++ % STALE_RING] = p;
}

/* Is q inside (or just around) a live block? Then it is not a stale pointer any more. */
static int near_live_block(const void *q) {
  size_t i;
  uintptr_t a = (uintptr_t)q;
  for (i = 0; i < SLOTS; i++) {
    uintptr_t b0, b1;
    if (!slots[i].p)
      continue;
    b0 = (uintptr_t)slots[i].p;
    b1 = b0 + slots[i].usable;
    /* Before a block: its header (a debug block's with its stack traces: up to 1 KB). */
    if (a + 1024u >= b0 && a <= b1 + MEDIUM_HEADER_SIZE)
      return 1;
  }
  return 0;
}

static size_t blocks_in_use(void) {
  fastmm_state st;
  fastmm_flush_thread_cache();
  fastmm_get_state(&st);
  return st.small.blocks_in_use + st.medium.blocks_in_use + st.large.blocks_in_use;
}

/* p is not a live block: every entry point must refuse it and change nothing. With the header
 * word in front of p known to be readable (p inside a live block), ReallocMem is also asked for
 * the sizes that header would keep in place if it were trusted: its usable size (4 GB - 4 when
 * the slot field is 0), the smallest size that stays, and the 300.
 * The bound records pass a pointer in no memory of ours to the previous manager and report one
 * in ours: Delphi's FreeMem by a non-zero result, its ReallocMem and Free Pascal's FreeMem,
 * FreeMemSize and ReAllocMem by heap_error(204); Free Pascal's MemSize is 0 for it. */
/* Can the byte at p be read? Asked without reading it: the OS copies it into a pipe or says it
 * cannot (POSIX), or the page is committed and readable (Windows). */
static int byte_readable(const void *p) {
#if defined(_WIN32)
  MEMORY_BASIC_INFORMATION m;
  if (VirtualQuery(p, &m, sizeof m) == 0 || m.State != MEM_COMMIT)
    return 0;
  return (m.Protect & (PAGE_NOACCESS | PAGE_GUARD)) == 0;
#else
  static int fds[2] = {-1, -1};
  char c;
  if (fds[0] < 0 && pipe(fds) != 0)
    return 1;
  if (write(fds[1], p, 1) != 1)
    return 0;
  return read(fds[0], &c, 1) == 1;
#endif
}

/* The bound records' rule for a pointer that is not a live block (fastmm.h): reported when it
 * lies in memory of ours (fastmm_heap_contains) or in memory whose byte cannot be read (a stale
 * pointer to memory of ours given back to the OS), handed to the previous manager otherwise. */
static int bound_records_call_it_ours(const void *p) {
  return fastmm_heap_contains(p) || !byte_readable(p);
}

static void refused_header(void *p, const char *what, int header_readable) {
  size_t before = blocks_in_use();
  int ours = p != NULL && bound_records_call_it_ours(p);
  unsigned calls = previous_calls, e204 = errors_204, e203 = errors_203;
  unsigned want_calls = 0, want_204 = 0;
  if (header_readable) {
    uint32_t h; /* p may be misaligned: the four bytes before it, as they are */
    memcpy(&h, (const char *)p - BLOCK_HEADER_SIZE, sizeof h);
    uint32_t usable = small_header_usable(h);
    size_t sizes[3];
    sizes[0] = usable > (1u << 30) ? (size_t)1 << 30 : size_cap(usable, FUZZ_LARGE_CAP);
    sizes[1] = usable <= 64 ? 1 : (usable - 64 + 3) / 4;
    sizes[2] = 300;
    for (size_t i = 0; i < 3; i++) {
      void *q = fastmm_reallocmem(p, sizes[i]);
      FUZZ_CHECK(q == NULL, "reallocmem(%s %p, %zu) = %p (header 0x%08lx)", what, p, sizes[i], q,
                 (unsigned long)h);
      q = delphi.realloc_mem(p, (intptr_t)sizes[i]);
      FUZZ_CHECK(q == NULL, "Delphi ReallocMem(%s %p, %zu) = %p (header 0x%08lx)", what, p,
                 sizes[i], q, (unsigned long)h);
    }
  }
  int rc = fastmm_freemem(p);
  FUZZ_CHECK(rc == FASTMM_ERROR_INVALID_POINTER, "freemem(%s %p) = %d, not refused", what, p, rc);
  FUZZ_CHECK(fastmm_usable_size(p) == 0, "usable_size(%s %p) = %zu", what, p,
             fastmm_usable_size(p));
  FUZZ_CHECK(fastmm_owns_block(p) == 0, "owns_block(%s %p) = 1", what, p);
  FUZZ_CHECK(fastmm_register_expected_leak(p) == 0, "register_expected_leak(%s %p) accepted", what,
             p);
  FUZZ_CHECK(delphi.register_expected_memory_leak(p) == 0,
             "Delphi RegisterExpectedMemoryLeak(%s %p) accepted", what, p);
  {
    void *q = fastmm_reallocmem(p, 100);
    FUZZ_CHECK(q == NULL, "reallocmem(%s %p, 100) = %p", what, p, q);
    q = delphi.realloc_mem(p, 100);
    FUZZ_CHECK(q == NULL, "Delphi ReallocMem(%s %p, 100) = %p", what, p, q);
  }
  FUZZ_CHECK(delphi.free_mem(p) != 0, "Delphi FreeMem(%s %p) accepted", what, p);
  /* Delphi's bound record. */
  rc = delphi_bound.free_mem(p);
  FUZZ_CHECK(ours ? rc != 0 : rc == 0, "bound Delphi FreeMem(%s %p, in our memory: %d) = %d", what,
             p, ours, (int)rc);
  {
    void *q = delphi_bound.realloc_mem(p, 100);
    FUZZ_CHECK(q == (ours ? NULL : p), "bound Delphi ReallocMem(%s %p, 100) = %p", what, p, q);
  }
  want_calls += ours ? 0u : 2u;
  want_204 += ours ? 1u : 0u;
  /* Free Pascal's. */
  {
    void *v = p;
    fpc.free_mem(p);
    fpc.free_mem_size(p, 100);
    fpc.realloc_mem(&v, 100);
    FUZZ_CHECK(v == p, "Free Pascal ReAllocMem(%s %p) changed the variable to %p", what, p, v);
    size_t n = fpc.mem_size(p);
    FUZZ_CHECK(n == 0, "Free Pascal MemSize(%s %p) = %zu", what, p, n);
    want_calls += ours ? 0u : 4u;
    want_204 += ours ? 3u : 0u;
  }
  FUZZ_CHECK(previous_calls - calls == want_calls && errors_204 - e204 == want_204 &&
                 errors_203 == e203,
             "bound records and %s %p (in our memory: %d): %u previous-manager calls (%u "
             "expected), %u errors 204 (%u expected), %u errors 203",
             what, p, ours, previous_calls - calls, want_calls, errors_204 - e204, want_204,
             errors_203 - e203);
  FUZZ_CHECK(blocks_in_use() == before, "refusing %s %p changed the block count", what, p);
}

static void refused(void *p, const char *what) {
  refused_header(p, what, 0);
}

/* full: 0 checks both ends of each block, 1 every byte, 2 every byte and the debug-block scan. */
static void check_all(const char *what, int full) {
  size_t i;
  int fault;
  for (i = 0; i < SLOTS; i++) {
    if (full)
      check_slot(&slots[i], what);
    else
      quick_check_slot(&slots[i], what);
  }
  fault = fastmm_check_heap();
  FUZZ_CHECK(fault == 0, "%s: fastmm_check_heap() = %d", what, fault);
  /* The scan reads every quarantined byte (up to 8 MB, a byte at a time): only at the end of
   * an input. */
  if (full > 1)
    FUZZ_CHECK(fastmm_scan_debug_blocks_for_corruption() == 1,
               "%s: the debug-block scan found a corrupted block", what);
}

/* ---- operations ---------------------------------------------------------------------------- */

/* The counters of the bound records' callbacks must not move for a live block, but for 203
 * when memory runs out (checked by the caller). */
typedef struct callbacks {
  unsigned previous, e203, e204;
} callbacks;
static callbacks callbacks_now(void) {
  callbacks c = {previous_calls, errors_203, errors_204};
  return c;
}
static void callbacks_unchanged(callbacks c, unsigned more_203, const char *what, const void *p) {
  FUZZ_CHECK(previous_calls == c.previous && errors_204 == c.e204 &&
                 errors_203 == c.e203 + more_203,
             "%s(%p): %u previous-manager calls, %u errors 204, %u errors 203 (%u expected)", what,
             p, previous_calls - c.previous, errors_204 - c.e204, errors_203 - c.e203, more_203);
}

static void free_slot(slot *s, int via) {
  int rc;
  callbacks c = callbacks_now();
  if (!s->p)
    return;
  check_slot(s, "before free");
  switch (via) {
  case VIA_DELPHI:
    rc = delphi.free_mem(s->p);
    break;
  case VIA_DELPHI_BOUND:
    rc = delphi_bound.free_mem(s->p);
    break;
  case VIA_FPC: /* FreeMem and FreeMemSize by the seed's parity; both return 0 */
    rc = (int)(s->seed & 1 ? fpc.free_mem_size(s->p, s->request) : fpc.free_mem(s->p));
    break;
  default:
    rc = fastmm_freemem(s->p);
    break;
  }
  FUZZ_CHECK(rc == FASTMM_OK, "%s FreeMem(%p) = %d for a live block", via_name[via], (void *)s->p,
             rc);
  callbacks_unchanged(c, 0, "FreeMem", s->p);
  remember_stale(s->p);
  s->p = NULL;
}

/* Out of memory through Free Pascal's record: 203 unless ReturnNilIfGrowHeapFails. */
static unsigned fpc_203(int via) {
  return via == VIA_FPC && !fpc_return_nil ? 1u : 0u;
}

static void do_get(slot *s, size_t n, int zeroed, int via) {
  void *p;
  callbacks c;
  free_slot(s, VIA_C);
  n = size_cap(n, FUZZ_LARGE_CAP);
  c = callbacks_now();
  switch (via) {
  case VIA_DELPHI:
  case VIA_DELPHI_BOUND: /* the bound record's GetMem and AllocMem are the plain ones */
    p = via == VIA_DELPHI
            ? (zeroed ? delphi.alloc_mem((intptr_t)n) : delphi.get_mem((intptr_t)n))
            : (zeroed ? delphi_bound.alloc_mem((intptr_t)n) : delphi_bound.get_mem((intptr_t)n));
    break;
  case VIA_FPC:
    p = zeroed ? fpc.alloc_mem(n) : fpc.get_mem(n);
    break;
  default:
    p = zeroed ? fastmm_allocmem(n) : fastmm_getmem(n);
    break;
  }
  if (p == NULL) {
    FUZZ_CHECK(limit_set, "%s %s(%zu) = NULL with no memory limit set", via_name[via],
               zeroed ? "AllocMem" : "GetMem", n);
    callbacks_unchanged(c, fpc_203(via), "GetMem failing", p);
    return;
  }
  callbacks_unchanged(c, 0, "GetMem", p);
  adopt(s, p, n, zeroed);
}

/* ReallocMem through an entry point. */
static unsigned char *realloc_via(int via, unsigned char *p, size_t n) {
  void *v = p, *r;
  switch (via) {
  case VIA_DELPHI:
    return (unsigned char *)delphi.realloc_mem(p, (intptr_t)n);
  case VIA_DELPHI_BOUND:
    /* Delphi's System never calls ReallocMem with nil or 0 (it calls GetMem, FreeMem): the
     * bound record still gives them their C meaning. */
    return (unsigned char *)delphi_bound.realloc_mem(p, (intptr_t)n);
  case VIA_FPC:
    /* By reference: the variable follows the block, is nil after a free, and is left alone by
     * a failure. */
    r = fpc.realloc_mem(&v, n);
    if (r != NULL || n == 0 || p == NULL)
      FUZZ_CHECK(v == r, "Free Pascal ReAllocMem(%p, %zu) = %p, the variable %p", (void *)p, n, r,
                 v);
    else
      FUZZ_CHECK(v == p, "Free Pascal ReAllocMem(%p, %zu) failed and changed the variable to %p",
                 (void *)p, n, v);
    return (unsigned char *)r;
  default:
    return (unsigned char *)fastmm_reallocmem(p, n);
  }
}

/* n is capped by the caller. */
static void do_realloc(slot *s, size_t n, int via) {
  unsigned char *q;
  size_t keep;
  callbacks c = callbacks_now();
  if (!s->p) { /* ReallocMem(NULL, n) allocates */
    q = realloc_via(via, NULL, n);
    if (q == NULL) {
      FUZZ_CHECK(limit_set || n == 0, "%s ReallocMem(NULL, %zu) = NULL with no limit set",
                 via_name[via], n);
      callbacks_unchanged(c, n == 0 ? 0 : fpc_203(via), "ReallocMem(NULL) failing", NULL);
      return;
    }
    callbacks_unchanged(c, 0, "ReallocMem(NULL)", q);
    adopt(s, q, n, 0);
    return;
  }
  check_slot(s, "before realloc");
  q = realloc_via(via, s->p, n);
  if (n == 0) { /* Delphi's meaning: frees, returns NULL */
    void *old = s->p;
    FUZZ_CHECK(q == NULL, "%s ReallocMem(%p, 0) = %p, not NULL", via_name[via], old, (void *)q);
    callbacks_unchanged(c, 0, "ReallocMem(p, 0)", old);
    s->p = NULL;
    FUZZ_CHECK(fastmm_owns_block(old) == 0, "reallocmem(%p, 0) left the block live", old);
    remember_stale(old);
    return;
  }
  if (q == NULL) {
    FUZZ_CHECK(limit_set, "%s ReallocMem(%p: %zu -> %zu) = NULL with no memory limit set",
               via_name[via], (void *)s->p, s->request, n);
    callbacks_unchanged(c, fpc_203(via), "ReallocMem failing", s->p);
    check_slot(s, "after a failed realloc: the old block must be intact");
    return;
  }
  callbacks_unchanged(c, 0, "ReallocMem", s->p);
  keep = s->valid < n ? s->valid : n;
  {
    size_t bad = pattern_check(q, keep, s->seed);
    FUZZ_CHECK(bad == (size_t)-1, "reallocmem(%p -> %p, %zu -> %zu): byte %zu of %zu lost",
               (void *)s->p, (void *)q, s->request, n, bad, keep);
  }
  if (q != s->p)
    remember_stale(s->p);
  s->p = q;
  s->request = n;
  s->usable = fastmm_usable_size(q);
  FUZZ_CHECK(((uintptr_t)q & (BLOCK_ALIGNMENT - 1)) == 0, "realloc gave %p, not 16-aligned",
             (void *)q);
  FUZZ_CHECK(s->usable >= n, "realloc to %zu: usable_size %zu", n, s->usable);
  check_no_overlap(s);
  /* Extend the pattern over the new bytes (same seed: offset-dependent). */
  pattern_fill(q, keep, n, s->seed);
  s->valid = n;
}

/* Use every usable byte: fastmm_usable_size says they are the caller's. */
static void do_fill_usable(slot *s) {
  if (!s->p)
    return;
  check_slot(s, "usable");
  pattern_fill(s->p, s->valid, s->usable, s->seed);
  s->valid = s->usable;
}

static void do_negative(reader *r, slot *s) {
  static const intptr_t negative[] = {
      -1, -2, -16, -4096, -(intptr_t)MEDIUM_MAX_USER, INTPTR_MIN, INTPTR_MIN + 1};
  intptr_t n = negative[rd8(r) % (sizeof negative / sizeof negative[0])];
  void *p = delphi.get_mem(n);
  FUZZ_CHECK(p == NULL, "Delphi GetMem(%lld) = %p", (long long)n, p);
  p = delphi.alloc_mem(n);
  FUZZ_CHECK(p == NULL, "Delphi AllocMem(%lld) = %p", (long long)n, p);
  if (s->p) {
    callbacks c = callbacks_now();
    p = delphi.realloc_mem(s->p, n);
    FUZZ_CHECK(p == NULL, "Delphi ReallocMem(p, %lld) = %p", (long long)n, p);
    p = delphi_bound.realloc_mem(s->p, n);
    FUZZ_CHECK(p == NULL, "bound Delphi ReallocMem(p, %lld) = %p", (long long)n, p);
    callbacks_unchanged(c, 0, "bound Delphi ReallocMem, negative size", s->p);
    check_slot(s, "after a negative ReallocMem");
  }
}

static void do_huge(reader *r, slot *s) {
  static const size_t huge[] = {(size_t)-1,
                                (size_t)-1 - 15,
                                (size_t)-1 - LARGE_GRANULARITY + 1,
                                ((size_t)-1) / 2,
                                ((size_t)-1) / 2 + 1,
                                MAX_REQUEST_SIZE,
                                MAX_REQUEST_SIZE + 1,
                                MAX_REQUEST_SIZE - LARGE_GRANULARITY};
  size_t n = huge[rd8(r) % (sizeof huge / sizeof huge[0])];
  callbacks c = callbacks_now();
  void *p = fastmm_getmem(n);
  FUZZ_CHECK(p == NULL, "getmem(%zu) = %p", n, p);
  p = fastmm_allocmem(n);
  FUZZ_CHECK(p == NULL, "allocmem(%zu) = %p", n, p);
  /* Free Pascal's record: out of memory, 203 each unless ReturnNilIfGrowHeapFails. */
  p = fpc.get_mem(n);
  FUZZ_CHECK(p == NULL, "Free Pascal GetMem(%zu) = %p", n, p);
  p = fpc.alloc_mem(n);
  FUZZ_CHECK(p == NULL, "Free Pascal AllocMem(%zu) = %p", n, p);
  callbacks_unchanged(c, 2u * fpc_203(VIA_FPC), "Free Pascal GetMem, impossible size", NULL);
  if (s->p) {
    p = fastmm_reallocmem(s->p, n);
    FUZZ_CHECK(p == NULL, "reallocmem(p, %zu) = %p", n, p);
    c = callbacks_now();
    p = realloc_via(VIA_FPC, s->p, n);
    FUZZ_CHECK(p == NULL, "Free Pascal ReAllocMem(p, %zu) = %p", n, p);
    callbacks_unchanged(c, fpc_203(VIA_FPC), "Free Pascal ReAllocMem, impossible size", s->p);
    p = delphi_bound.realloc_mem(s->p, (intptr_t)n);
    FUZZ_CHECK(p == NULL, "bound Delphi ReallocMem(p, %zu) = %p", n, p);
    callbacks_unchanged(c, fpc_203(VIA_FPC), "bound Delphi ReallocMem, impossible size", s->p);
    check_slot(s, "after an impossible ReallocMem");
  }
}

static void do_interior(reader *r, slot *s) {
  size_t off;
  if (!s->p || s->usable < 2)
    return;
  off = 1 + rd24(r) % (s->usable - 1);
  if (rd8(r) & 1)
    off = (off + 15) & ~(size_t)15; /* aligned interior pointers get past the first test */
  if (off == 0 || off >= s->usable)
    return;
  refused_header(s->p + off, "interior pointer", off >= BLOCK_HEADER_SIZE);
  check_slot(s, "after an interior free");
}

/* A small header written by the program at a 16-aligned place inside a live block, and the
 * pointer after it: refused by every entry point, then the block's bytes put back. The header
 * names the block's own span with its class, slot and exact distance (when the block is small),
 * is a copy of another live block's header word, is that copy's span and class named from here,
 * or is bits from the input with the kind forced to SMALL. */
static void do_forged_header(reader *r, slot *s) {
  unsigned how = rd8(r);
  size_t off;
  uint32_t h;
  const slot *o = &slots[rd8(r) % SLOTS];
  if (!s->p || s->usable < 48)
    return;
  off = 16u * (1u + rd24(r) % ((s->usable - 16u) / 16u)); /* 16 .. usable - 16 */
  unsigned char *p = s->p + off;
  uint32_t own = fastmm_heap_contains(s->p - BLOCK_HEADER_SIZE) ? block_header(s->p) : 0;
  uint32_t other = o->p && fastmm_heap_contains(o->p - BLOCK_HEADER_SIZE) ? block_header(o->p) : 0;
  switch (how % 4) {
  case 0: /* the block's own span, class and slot */
    if ((own & BLOCK_KIND_MASK) != BLOCK_FLAG_SMALL)
      return;
    h = small_header_make(small_header_class(own), small_header_slot_size(own),
                          (unsigned)(small_header_span_offset(own) + off));
    if (small_header_span_offset(h) != small_header_span_offset(own) + off)
      return; /* past what the offset field holds */
    break;
  case 1: /* a live block's header word, copied */
    if ((other & BLOCK_KIND_MASK) != BLOCK_FLAG_SMALL)
      return;
    h = other;
    break;
  case 2: { /* that block's span and class, named from here */
    uintptr_t span;
    if ((other & BLOCK_KIND_MASK) != BLOCK_FLAG_SMALL)
      return;
    span = (uintptr_t)o->p - small_header_span_offset(other);
    if ((uintptr_t)p < span + SMALL_SPAN_HEADER_SIZE ||
        (uintptr_t)p - span - SMALL_SPAN_HEADER_SIZE >= 8192u * SMALL_SPAN_OFFSET_UNIT)
      return;
    h = small_header_make(small_header_class(other), small_header_slot_size(other),
                          (unsigned)((uintptr_t)p - span));
    break;
  }
  default:
    h = (rd24(r) << 8 | rd8(r)) & ~BLOCK_KIND_MASK;
    h |= BLOCK_FLAG_SMALL;
    break;
  }
  if (off + 16 > s->usable)
    return;
  block_set_header(p, h);
  refused_header(p, "interior pointer under a forged small header", 1);
  /* The four bytes are the program's: put the pattern back where it was valid. */
  if (off - BLOCK_HEADER_SIZE < s->valid)
    pattern_fill(s->p, off - BLOCK_HEADER_SIZE, off < s->valid ? off : s->valid, s->seed);
  check_slot(s, "after a forged header");
}

static void do_stale(reader *r) {
  unsigned k = rd8(r) % STALE_RING;
  void *p = stale[k];
  size_t i;
  if (p == NULL || near_live_block(p))
    return; /* the memory is a live block's again: not stale */
  for (i = 0; i < SLOTS; i++)
    if (slots[i].p == p)
      return;
  if (fastmm_owns_block(p)) { /* say what it was before refused() fails on it */
    const stale_note *n = &stale_notes[k];
    uint32_t h = 0;
    if (fastmm_heap_contains((const char *)p - BLOCK_HEADER_SIZE))
      h = block_header(p);
    fprintf(stderr,
            "fuzz_heap: stale pointer %p, freed at operation %lu (%s; %zu bytes asked, %zu "
            "usable, debug mode %d), is owned again: header word now 0x%08x, usable %zu, debug "
            "mode %d\n",
            p, n->op, n->op_name, n->request, n->usable, n->debug, (unsigned)h,
            fastmm_usable_size(p), fastmm_debug_mode_active());
  }
  refused(p, "stale pointer");
}

static void do_foreign(reader *r) {
  static _Alignas(64) unsigned char static_area[256];
  _Alignas(64) unsigned char stack_area[256];
  unsigned fill = rd8(r) | 1u; /* odd: a FREE-flagged header word */
  unsigned off = 16u * (1u + rd8(r) % 14u);
  memset(stack_area, (int)fill, sizeof stack_area);
  memset(static_area, (int)fill, sizeof static_area);
  refused(stack_area + off, "stack pointer");
  refused(static_area + off, "static pointer");
  memset(stack_area, 0, sizeof stack_area);
  refused(stack_area + off, "stack pointer, zero header");
}

static void do_limit(reader *r) {
  unsigned k = rd8(r);
  if (k < 96 || limit_set) {
    fastmm_set_memory_usage_limit(0);
    limit_set = 0;
  } else {
    fastmm_state st;
    fastmm_get_state(&st);
    /* Room for at most a few more 64 KB mappings: spans and large blocks start failing. */
    fastmm_set_memory_usage_limit(st.os_bytes_reserved + (size_t)(k % 48u) * LARGE_GRANULARITY + 1);
    limit_set = 1;
    fpc_return_nil = (uint8_t)(k & 1); /* Free Pascal's out of memory: NULL, or 203 first */
  }
}

/* Debug mode entered (nested up to MODE_DEPTH_MAX deep, with a stack depth from the input;
 * through fastmm_enter_debug_mode or fastmm_get_memory_manager_debug, whose record must be the
 * plain one) or left (leaving the last level flushes the quarantine), while blocks live. */
static void do_debug_mode(reader *r) {
  unsigned k = rd8(r);
  if (debug_depth == 0 || (k & 1 && debug_depth < MODE_DEPTH_MAX)) {
    fastmm_set_debug_mode_stack_trace_entry_count(k / 4 % 9u);
    if (k & 2) {
      fastmm_memory_manager_ex rec;
      fastmm_get_memory_manager_debug(&rec);
      FUZZ_CHECK(memcmp(&rec, &delphi, sizeof rec) == 0,
                 "fastmm_get_memory_manager_debug's record is not the plain record");
    } else {
      fastmm_enter_debug_mode();
    }
    debug_depth++;
  } else {
    fastmm_exit_debug_mode();
    debug_depth--;
  }
  FUZZ_CHECK(fastmm_debug_mode_active() == (debug_depth > 0), "debug mode is %d at depth %u",
             fastmm_debug_mode_active(), debug_depth);
}

/* An erase mode one level deeper or shallower. */
static void erase_mode_step(unsigned *depth, int deeper, void (*begin)(void), void (*end)(void),
                            int (*active)(void), const char *what) {
  if (*depth == 0 || (deeper && *depth < MODE_DEPTH_MAX)) {
    begin();
    ++*depth;
  } else {
    end();
    --*depth;
  }
  FUZZ_CHECK(active() == (*depth > 0), "%s is %d at depth %u", what, active(), *depth);
}

static void do_erase_modes(reader *r) {
  unsigned k = rd8(r);
  if (k & 1)
    erase_mode_step(&erase_freed_depth, k & 2, fastmm_begin_erase_freed_block_content,
                    fastmm_end_erase_freed_block_content, fastmm_erase_freed_block_content_active,
                    "erase freed");
  else
    erase_mode_step(&erase_allocated_depth, k & 2, fastmm_begin_erase_allocated_block_content,
                    fastmm_end_erase_allocated_block_content,
                    fastmm_erase_allocated_block_content_active, "erase allocated");
}

static void modes_off(void) {
  /* Leaving debug mode frees the quarantine. A debug block freed after debug mode was left
   * goes to the quarantine too and stays there (up to 1024 blocks or 8 MB) until debug mode is
   * left again: enter and leave once, so everything freed is really free (reported; a
   * release call does not flush the quarantine). */
  for (; debug_depth > 1; debug_depth--)
    fastmm_exit_debug_mode();
  if (debug_depth == 0)
    fastmm_enter_debug_mode();
  fastmm_exit_debug_mode();
  debug_depth = 0;
  for (; erase_freed_depth > 0; erase_freed_depth--)
    fastmm_end_erase_freed_block_content();
  for (; erase_allocated_depth > 0; erase_allocated_depth--)
    fastmm_end_erase_allocated_block_content();
  FUZZ_CHECK(!fastmm_debug_mode_active() && !fastmm_erase_freed_block_content_active() &&
                 !fastmm_erase_allocated_block_content_active(),
             "a mode is still on after every enter was matched by an exit");
}

/* A large block grown or shrunk by a random amount (in place when the reserve after it allows;
 * the bytes kept either way), through any entry point. An empty or smaller slot gets a large
 * block first. */
static void do_large_resize(reader *r, slot *s, int via) {
  unsigned how = rd8(r);
  size_t amount = (size_t)rd16(r) << (how % 6u); /* up to 2 MB a step, log-uniform */
  size_t n;
  if (!s->p || s->usable <= MEDIUM_MAX_USER) {
    do_get(s, MEDIUM_MAX_USER + 1 + (amount & 0x3FFFFu), how & 0x80, via);
    if (!s->p)
      return;
    amount = (size_t)rd16(r) << 4;
  }
  if (how & 0x40)
    n = amount >= s->usable - MEDIUM_MAX_USER ? MEDIUM_MAX_USER + 1 : s->usable - amount;
  else
    n = size_cap(s->usable + amount, FUZZ_GROW_CAP);
  do_realloc(s, n, via);
}

/* The calls that move free memory about while blocks live: every pending free processed (the
 * calling thread's cache emptied, fastmm.h says), all free memory released, an idle pass. The
 * live blocks keep their bytes (checked at the next periodic check and before each is freed). */
static void do_pending_and_release(reader *r) {
  unsigned k = rd8(r) % 3u;
  fastmm_state st;
  if (k == 0) {
    fastmm_process_all_pending_frees();
    fastmm_get_state(&st);
    FUZZ_CHECK(st.thread_cached_blocks == 0,
               "%zu blocks cached after fastmm_process_all_pending_frees (debug depth %u)",
               st.thread_cached_blocks, debug_depth);
  } else if (k == 1) {
    fastmm_release_free_memory();
  } else {
    fastmm_release_idle_memory();
  }
}

/* Delphi's RegisterExpectedMemoryLeak by pointer: accepted once for a live block, refused when
 * already registered; unregistering accepted once. */
static int register_leak(void *p, int via) {
  return via == VIA_C ? fastmm_register_expected_leak(p) : delphi.register_expected_memory_leak(p);
}
static int unregister_leak(void *p, int via) {
  return via == VIA_C ? fastmm_unregister_expected_leak(p)
                      : delphi.unregister_expected_memory_leak(p);
}
/* Through the C exports or Delphi's record (its Booleans), crossed by `via`'s parity. */
static void do_expected_leak(slot *s, int via) {
  int a = via & 1 ? VIA_DELPHI : VIA_C, b = via & 2 ? VIA_DELPHI : VIA_C;
  if (!s->p)
    return;
  FUZZ_CHECK(register_leak(s->p, a) == 1, "register_expected_leak(live %p) refused", (void *)s->p);
  FUZZ_CHECK(register_leak(s->p, b) == 0, "register_expected_leak(%p) twice accepted",
             (void *)s->p);
  FUZZ_CHECK(unregister_leak(s->p, b) == 1, "unregister_expected_leak(%p) refused", (void *)s->p);
  FUZZ_CHECK(unregister_leak(s->p, a) == 0, "unregister_expected_leak(%p) twice accepted",
             (void *)s->p);
}

/* ---- one input ---------------------------------------------------------------------------- */

static size_t os_baseline;
static int started;

/* Debug mode's events go to a handler that counts them, but in the inputs whose hash picks the
 * log (one in DEEP_END_EVERY): each event written maps a text buffer and opens, writes and
 * closes the log, which was a third of the system time. */
static unsigned long long events_seen;
static void FASTMM_CDECL count_event(const fastmm_debug_event *e) {
  FUZZ_CHECK(e->kind > FASTMM_EVENT_NONE && e->kind < FASTMM_EVENT_KIND_COUNT,
             "debug event of kind %d", (int)e->kind);
  events_seen++;
}

static void start_once(void) {
  fastmm_state st;
  if (started)
    return;
  started = 1;
  atexit(report_counts);
  ref_init();
  boundaries_init();
  fastmm_get_memory_manager(&delphi);
  {
    fastmm_fpc_bindings b = {sizeof b,     fpc_prev_free,     fpc_prev_realloc, fpc_prev_free,
                             fpc_prev_get, pascal_heap_error, &fpc_return_nil,  &fpc_yes};
    fastmm_delphi_bindings d = {sizeof d, delphi_prev_free, delphi_prev_realloc, pascal_heap_error};
    if (!fastmm_get_fpc_memory_manager(&fpc, &b))
      fuzz_fail(__FILE__, __LINE__, "fastmm_get_fpc_memory_manager refused");
    if (!fastmm_get_memory_manager_with_previous(&delphi_bound, &d))
      fuzz_fail(__FILE__, __LINE__, "fastmm_get_memory_manager_with_previous refused");
  }
  /* Debug mode reports bad pointers to its event log: nowhere, here. */
#if defined(_WIN32)
  fastmm_set_event_log_filename("NUL");
#else
  fastmm_set_event_log_filename("/dev/null");
#endif
  fastmm_set_output_debug_string_events(0);
  /* The thread cache and the expected-leak table are made on first use and kept (mapped, so
   * counted in the OS bytes): make them before the baseline. */
  {
    void *p = fastmm_getmem(1);
    fastmm_register_expected_leak(p);
    fastmm_unregister_expected_leak(p);
    fastmm_freemem(p);
  }
  fastmm_flush_thread_cache();
  fastmm_release_free_memory();
  fastmm_get_state(&st);
  os_baseline = st.os_bytes_reserved;
}

/* deep: the whole check, the release and the exact OS bytes too (DEEP_END_OPS). */
static void finish_input(int deep) {
  size_t i;
  fastmm_state st;
  int fault;
  op_name = "end";
  fastmm_set_memory_usage_limit(0);
  limit_set = 0;
  fpc_return_nil = 0;
  if (deep)
    check_all("end of input", 2);
  for (i = 0; i < SLOTS; i++)
    free_slot(&slots[i], VIA_C); /* each checked whole first */
  modes_off();                   /* leaving debug mode frees the quarantine */
  fastmm_flush_thread_cache();
  if (deep)
    fastmm_release_free_memory();
  fastmm_get_state(&st);
  FUZZ_CHECK(st.small.blocks_in_use == 0 && st.medium.blocks_in_use == 0 &&
                 st.large.blocks_in_use == 0,
             "blocks left in use after freeing all: small %zu, medium %zu, large %zu",
             st.small.blocks_in_use, st.medium.blocks_in_use, st.large.blocks_in_use);
  FUZZ_CHECK(st.small.bytes_in_use == 0 && st.medium.bytes_in_use == 0 &&
                 st.large.bytes_in_use == 0,
             "bytes left in use: small %zu, medium %zu, large %zu", st.small.bytes_in_use,
             st.medium.bytes_in_use, st.large.bytes_in_use);
  FUZZ_CHECK(st.thread_cached_blocks == 0, "%zu blocks cached after a flush",
             st.thread_cached_blocks);
  FUZZ_CHECK(!deep || st.os_bytes_reserved == os_baseline,
             "%zu bytes mapped after freeing everything and releasing, %zu at the start",
             st.os_bytes_reserved, os_baseline);
  fault = fastmm_check_heap();
  FUZZ_CHECK(fault == 0, "fastmm_check_heap() = %d after freeing everything", fault);
  for (i = 0; i < STALE_RING; i++)
    stale[i] = NULL;
  stale_next = 0; /* the next input's stale pointers are numbered from 0, as in a replay */
}

/* The input's hash: what it picks is the same when the input is replayed alone. */
static uint32_t input_hash(const uint8_t *data, size_t size) {
  uint32_t h = 2166136261u;
  size_t i;
  for (i = 0; i < size; i++)
    h = (h ^ data[i]) * 16777619u;
  return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  reader r;
  unsigned long n, next_check = CHECK_FIRST, interval = CHECK_FIRST;
  uint32_t hash = input_hash(data, size);
  int picked = hash % DEEP_END_EVERY == 0;
  start_once();
  seed_counter = 1; /* patterns depend on the input alone */
  fastmm_set_event_handler(picked ? NULL : count_event);
  r.data = data;
  r.size = size;
  r.at = 0;
  for (n = 0; r.at < r.size && n < MAX_OPS; n++) {
    unsigned op = rd8(&r);
    slot *s = &slots[rd8(&r) % SLOTS];
    /* The entry point of the operations that take any (the C exports, Delphi's record, its bound
     * form, Free Pascal's), and of those that take a Pascal record. */
    int via = (int)(op / 23u % VIA_COUNT), pascal_via = 1 + (int)(op / 23u % 3u);
    op_index = n;
    /* op % 23 == 19 was "flush and check" only; with the top bit it is the forged header, so the
     * corpus made before it decodes as it did, but for those opcodes. */
    switch (op % 23 == 19 && (op & 0x80) ? 23 : op % 23) {
    case 0:
      op_name = "getmem";
      do_get(s, pick_size(&r, s), 0, VIA_C);
      break;
    case 1:
      op_name = "GetMem/AllocMem, any entry";
      do_get(s, pick_size(&r, s), op & 0x40, via);
      break;
    case 2:
      op_name = "allocmem";
      do_get(s, pick_size(&r, s), 1, VIA_C);
      break;
    case 3:
      op_name = "freemem";
      free_slot(s, VIA_C);
      break;
    case 4: { /* with the top bit: freed again at once, through every entry */
      void *p = s->p;
      op_name = "FreeMem, any entry";
      free_slot(s, via);
      if (p != NULL && (op & 0x80)) {
        op_name = "double free";
        refused(p, "double free");
      }
      break;
    }
    case 5:
      op_name = "reallocmem";
      do_realloc(s, size_cap(pick_size(&r, s), FUZZ_LARGE_CAP), VIA_C);
      break;
    case 6:
      op_name = "large block resized";
      do_large_resize(&r, s, via);
      break;
    case 7:
      op_name = "pending frees and release";
      do_pending_and_release(&r);
      break;
    case 8:
      op_name = "ReallocMem to 0, any entry";
      do_realloc(s, 0, via);
      break;
    case 9:
      op_name = "fill usable";
      do_fill_usable(s);
      break;
    case 10:
      op_name = "Pascal GetMem/AllocMem";
      do_get(s, pick_size(&r, s), op & 0x40, pascal_via);
      break;
    case 11:
      op_name = "Pascal ReallocMem";
      do_realloc(s, size_cap(pick_size(&r, s), FUZZ_LARGE_CAP), pascal_via);
      break;
    case 12:
      op_name = "Pascal FreeMem";
      free_slot(s, pascal_via);
      break;
    case 13:
      op_name = "negative size";
      do_negative(&r, s);
      break;
    case 14:
      op_name = "impossible size";
      do_huge(&r, s);
      break;
    case 15:
      op_name = "interior pointer";
      do_interior(&r, s);
      break;
    case 16:
      op_name = "stale pointer";
      do_stale(&r);
      break;
    case 17:
      op_name = "foreign pointer";
      do_foreign(&r);
      break;
    case 18:
      op_name = "memory limit";
      do_limit(&r);
      break;
    case 20:
      op_name = "debug mode";
      do_debug_mode(&r);
      break;
    case 21:
      op_name = "erase modes";
      do_erase_modes(&r);
      break;
    case 22:
      op_name = "expected leak";
      do_expected_leak(s, via);
      break;
    case 23:
      op_name = "forged header";
      do_forged_header(&r, s);
      break;
    default:
      op_name = "flush and check"; /* every block's ends: each is checked whole when freed */
      fastmm_flush_thread_cache();
      check_all("check", 0);
      break;
    }
    if (n + 1 == next_check) {
      op_name = "periodic check";
      check_all("periodic check", 0);
      if (next_check >= CHECK_DENSE_UNTIL)
        interval *= 2;
      next_check += interval;
    }
  }
  total_ops += n;
  total_inputs++;
  if (total_ops - counts_written >= (1u << 20))
    write_counts();
  /* Short inputs (minimised crashes, the hand-made seeds) and the picked ones end deep. */
  finish_input(picked || n <= DEEP_END_OPS);
  return 0;
}
