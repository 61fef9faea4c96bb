/* SPDX-License-Identifier: MIT */
/* fastmm-c demo: four threads run a mixed workload of small, medium and large blocks through
 * the manager (allocate, grow and shrink with realloc, free, and hand blocks to another thread
 * which frees them), checking every block's contents. It prints what the manager holds while
 * the blocks are alive, again after they are all freed (what is kept for reuse, and why), and
 * once more after fastmm_release_free_memory gives that back; it exits non-zero if any content
 * check failed or anything is left in use. With `--usage-report <file.html>` it also writes the
 * usage report (fastmm_write_usage_report) while the blocks are alive: the page the README shows
 * (scripts/usage-report-screenshot.sh). */
#include "../tests/test_util.h" /* threads, a mutex, a PRNG and byte patterns */

#include "core/policy.h"
#include "fastmm.h"

#define NTHREADS 4
#define SLOTS 48
#define ITERATIONS 20000
#define INBOX_CAP 512

typedef struct block {
  unsigned char *p;
  size_t size;
  uint32_t seed;
} block;

typedef struct inbox {
  tu_mutex lock;
  block items[INBOX_CAP];
  size_t head, count;
} inbox;

typedef struct worker {
  int id;
  rng_state rng;
  block live[SLOTS];
  inbox *in, *out;
  unsigned long long ops, bad, handed_over;
} worker;

static inbox inboxes[NTHREADS];
static tu_mutex phase_lock;
static int workers_holding; /* workers done with their loop, holding their blocks */
static int release_now;     /* main has printed the table: free everything */
static int workers_done;    /* workers no longer sending anything */

static int read_flag(int *flag) {
  int v;
  tu_mutex_lock(&phase_lock);
  v = *flag;
  tu_mutex_unlock(&phase_lock);
  return v;
}

static void bump(int *counter) {
  tu_mutex_lock(&phase_lock);
  (*counter)++;
  tu_mutex_unlock(&phase_lock);
}

static size_t pick_size(rng_state *r) {
  size_t k = rng_below(r, 100);
  if (k < 70)
    return rng_range(r, 1, SMALL_MAX_USER); /* small */
  if (k < 96)
    return rng_range(r, SMALL_MAX_USER + 1, 256u * 1024u);      /* medium */
  return rng_range(r, MEDIUM_MAX_USER + 1, 4u * 1024u * 1024u); /* large */
}

static int intact(worker *w, const block *b, size_t n) {
  if (tu_check_pattern(b->p, n, b->seed) == (size_t)-1)
    return 1;
  w->bad++;
  fprintf(stderr, "thread %d: a %zu-byte block at %p lost its contents\n", w->id, b->size,
          (void *)b->p);
  return 0;
}

static void free_block(worker *w, block *b) {
  intact(w, b, b->size);
  if (fastmm_freemem(b->p) != FASTMM_OK) {
    w->bad++;
    fprintf(stderr, "thread %d: fastmm_freemem(%p) refused a live block\n", w->id, (void *)b->p);
  }
  b->p = NULL;
}

static void drain_inbox(worker *w) {
  for (;;) {
    block b;
    int have = 0;
    tu_mutex_lock(&w->in->lock);
    if (w->in->count) {
      b = w->in->items[w->in->head];
      w->in->head = (w->in->head + 1) % INBOX_CAP;
      w->in->count--;
      have = 1;
    }
    tu_mutex_unlock(&w->in->lock);
    if (!have)
      return;
    free_block(w, &b); /* allocated by another thread */
  }
}

static void step(worker *w) {
  block *b = &w->live[rng_below(&w->rng, SLOTS)];
  size_t op = rng_below(&w->rng, 100);
  w->ops++;
  if (!b->p) {
    b->size = pick_size(&w->rng);
    b->seed = (uint32_t)rng_next(&w->rng);
    b->p = (unsigned char *)fastmm_getmem(b->size);
    if (!b->p) {
      w->bad++;
      fprintf(stderr, "thread %d: fastmm_getmem(%zu) failed\n", w->id, b->size);
      return;
    }
    tu_fill_pattern(b->p, b->size, b->seed);
  } else if (op < 30) {
    /* Realloc up (a string growing) or down (a list trimmed); the common part must survive. */
    size_t to = op < 18 ? b->size + b->size / 2 + rng_range(&w->rng, 1, 4096) : b->size / 3 + 1;
    size_t keep = to < b->size ? to : b->size;
    unsigned char *q = (unsigned char *)fastmm_reallocmem(b->p, to);
    if (!q) {
      w->bad++;
      fprintf(stderr, "thread %d: fastmm_reallocmem(%zu -> %zu) failed\n", w->id, b->size, to);
      return;
    }
    b->p = q;
    if (intact(w, b, keep)) {
      b->size = to;
      b->seed = (uint32_t)rng_next(&w->rng);
      tu_fill_pattern(b->p, b->size, b->seed);
    } else {
      b->size = keep;
    }
  } else if (op < 55) {
    free_block(w, b);
  } else if (op < 75) {
    /* Hand it to the next thread, which checks and frees it. */
    int sent = 0;
    tu_mutex_lock(&w->out->lock);
    if (w->out->count < INBOX_CAP) {
      w->out->items[(w->out->head + w->out->count) % INBOX_CAP] = *b;
      w->out->count++;
      sent = 1;
    }
    tu_mutex_unlock(&w->out->lock);
    if (sent) {
      b->p = NULL;
      w->handed_over++;
    }
  } else {
    intact(w, b, b->size);
  }
  if (w->ops % 16 == 0)
    drain_inbox(w);
}

static void worker_main(void *arg) {
  worker *w = (worker *)arg;
  size_t i;
  for (i = 0; i < ITERATIONS; i++)
    step(w);
  /* Hold the blocks until main has shown what the manager holds. */
  bump(&workers_holding);
  while (!read_flag(&release_now)) {
    drain_inbox(w);
    tu_yield();
  }
  for (i = 0; i < SLOTS; i++)
    if (w->live[i].p)
      free_block(w, &w->live[i]);
  bump(&workers_done);
  while (read_flag(&workers_done) < NTHREADS) {
    drain_inbox(w);
    tu_yield();
  }
  drain_inbox(w);
  fastmm_flush_thread_cache();
}

static const char *human(size_t bytes, char *buf, size_t cap) {
  if (bytes >= 1024u * 1024u)
    snprintf(buf, cap, "%.1f MB", (double)bytes / (1024.0 * 1024.0));
  else if (bytes >= 1024u)
    snprintf(buf, cap, "%.1f KB", (double)bytes / 1024.0);
  else
    snprintf(buf, cap, "%zu B", bytes);
  return buf;
}

static void print_state(const char *title) {
  fastmm_state s;
  char a[32], b[32];
  const struct {
    const char *name;
    const fastmm_kind_usage *u;
  } rows[] = {{"small", &s.small}, {"medium", &s.medium}, {"large", &s.large}};
  size_t i, blocks = 0, used = 0, reserved = 0;
  fastmm_flush_thread_cache();
  fastmm_get_state(&s);
  printf("\n%s\n", title);
  printf("  %-8s %12s %27s %27s\n", "kind", "blocks", "bytes in use", "bytes reserved");
  for (i = 0; i < 3; i++) {
    printf("  %-8s %12zu %16zu %12s %16zu %12s\n", rows[i].name, rows[i].u->blocks_in_use,
           rows[i].u->bytes_in_use, human(rows[i].u->bytes_in_use, a, sizeof a),
           rows[i].u->bytes_reserved, human(rows[i].u->bytes_reserved, b, sizeof b));
    blocks += rows[i].u->blocks_in_use;
    used += rows[i].u->bytes_in_use;
    reserved += rows[i].u->bytes_reserved;
  }
  printf("  %-8s %12zu %16zu %12s %16zu %12s\n", "total", blocks, used, human(used, a, sizeof a),
         reserved, human(reserved, b, sizeof b));
  printf("  OS: %zu bytes mapped now (%s), peak %zu (%s); %zu map calls, %zu unmap calls\n",
         s.os_bytes_reserved, human(s.os_bytes_reserved, a, sizeof a), s.os_bytes_peak,
         human(s.os_bytes_peak, b, sizeof b), s.os_map_calls, s.os_unmap_calls);
  printf("  (reserved: small spans, medium spans less the small spans in them, large mappings)\n");
  printf("  free small blocks in thread caches: %zu; small size classes: %zu\n",
         s.thread_cached_blocks, s.small_class_count);
}

/* What is still reserved once every block is freed is kept for reuse on purpose: say what it is
 * and how it goes back, before main gives it back and shows the figures again. */
static void explain_kept_memory(void) {
  fastmm_state s;
  size_t kinds, other;
  char a[32], b[32];
  fastmm_get_state(&s);
  kinds = s.small.bytes_reserved + s.medium.bytes_reserved + s.large.bytes_reserved;
  other = s.os_bytes_reserved > kinds ? s.os_bytes_reserved - kinds : 0;
  printf("  No block is in use. What is still reserved is kept for reuse, not leaked:\n");
  printf("  - large: %s of freed large blocks in the large-block cache, their pages kept, so\n"
         "    the next large GetMem needs no system call;\n",
         human(s.large.bytes_reserved, a, sizeof a));
  printf("  - the rest of the OS figure, %s: empty medium spans kept as spares, and the\n"
         "    manager's own tables.\n",
         human(other, b, sizeof b));
  printf("  The manager's idle thread gives it back by itself once it has sat unused for an idle\n"
         "  period (%u ms); fastmm_release_free_memory() gives it back at once. Calling it now:\n",
         fastmm_get_idle_release_interval());
}

int main(int argc, char **argv) {
  static worker w[NTHREADS];
  const char *report = argc == 3 && strcmp(argv[1], "--usage-report") == 0 ? argv[2] : NULL;
  static tu_thread t[NTHREADS];
  fastmm_state end;
  unsigned long long bad = 0, ops = 0, handed = 0;
  int i, heap;

  printf("fastmm-c %s demo: %s build, %u-bit pointers, %d threads x %d operations\n",
         FASTMM_VERSION_STRING, tu_build_name(), (unsigned)(sizeof(void *) * 8), NTHREADS,
         ITERATIONS);
  tu_mutex_init(&phase_lock);
  for (i = 0; i < NTHREADS; i++) {
    tu_mutex_init(&inboxes[i].lock);
    w[i].id = i;
    rng_seed(&w[i].rng, 0xDE30u + (uint64_t)i);
    w[i].in = &inboxes[i];
    w[i].out = &inboxes[(i + 1) % NTHREADS];
  }
  for (i = 0; i < NTHREADS; i++)
    if (!tu_thread_start(&t[i], worker_main, &w[i])) {
      fprintf(stderr, "could not start thread %d\n", i);
      return 2;
    }
  while (read_flag(&workers_holding) < NTHREADS)
    tu_yield();
  print_state("While the workers hold their blocks:");
  if (report != NULL)
    printf("usage report %s: %s\n", report,
           fastmm_write_usage_report(report) ? "written" : "COULD NOT BE WRITTEN");
  tu_mutex_lock(&phase_lock);
  release_now = 1;
  tu_mutex_unlock(&phase_lock);
  for (i = 0; i < NTHREADS; i++)
    tu_thread_join(&t[i]);
  print_state("After every block was freed:");
  explain_kept_memory();
  fastmm_release_free_memory();
  print_state("After fastmm_release_free_memory():");

  for (i = 0; i < NTHREADS; i++) {
    bad += w[i].bad;
    ops += w[i].ops;
    handed += w[i].handed_over;
  }
  fastmm_get_state(&end);
  heap = fastmm_check_heap();
  printf("\n%llu operations, %llu blocks freed by another thread than the one that allocated "
         "them\n",
         ops, handed);
  printf("content checks: %s; heap check: %s; blocks left in use: %zu\n",
         bad ? "FAILED" : "all passed", heap ? "FAILED" : "consistent",
         end.small.blocks_in_use + end.medium.blocks_in_use + end.large.blocks_in_use);
  for (i = 0; i < NTHREADS; i++)
    tu_mutex_destroy(&inboxes[i].lock);
  tu_mutex_destroy(&phase_lock);
  return (bad || heap || end.small.blocks_in_use || end.medium.blocks_in_use ||
          end.large.blocks_in_use)
             ? 1
             : 0;
}
