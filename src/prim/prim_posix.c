/* SPDX-License-Identifier: MIT */
/* The OS layer on POSIX (Linux): mmap, compiler TLS with a pthread key for thread exit. */
#if !defined(_WIN32)
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__GLIBC__)
#include <execinfo.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#endif

#include "prim.h"

volatile int prim_fail_maps;
const uint64_t prim_tls_unset[PRIM_TLS_UNSET_BYTES / sizeof(uint64_t)];
__thread void *prim_tls_value __attribute__((tls_model("initial-exec"))) = (void *)prim_tls_unset;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;
static prim_thread_exit_fn thread_exit_fn;

/* Mappings are 64 KB aligned, as VirtualAlloc's are, so the page map (page_map.h) is exact:
 * map 64 KB more than asked and trim both ends. */
#define MAP_ALIGNMENT ((size_t)64 * 1024)

/* `size` bytes at a multiple of MAP_ALIGNMENT with protection `prot`, or NULL. */
static void *map_aligned(size_t size, int prot) {
  if (prim_fail_maps)
    return NULL;
  size_t padded = size + MAP_ALIGNMENT;
  if (padded < size)
    return NULL;
  char *p = (char *)mmap(NULL, padded, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == (char *)MAP_FAILED)
    return NULL;
  char *aligned = (char *)(((uintptr_t)p + MAP_ALIGNMENT - 1) & ~(uintptr_t)(MAP_ALIGNMENT - 1));
  if (aligned > p)
    munmap(p, (size_t)(aligned - p));
  size_t tail = (size_t)((p + padded) - (aligned + size));
  if (tail > 0)
    munmap(aligned + size, tail);
  return aligned;
}

void *prim_map(size_t size, int top_down) {
  (void)top_down; /* Linux's default layout maps from the top of the address space down */
  return map_aligned(size, PROT_READ | PROT_WRITE);
}

int prim_extend(void *at, size_t size) {
  if (prim_fail_maps)
    return 0;
#ifdef MAP_FIXED_NOREPLACE
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
#else
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#endif
  void *p = mmap(at, size, PROT_READ | PROT_WRITE, flags, -1, 0);
  if (p == at)
    return 1;
  if (p != MAP_FAILED)
    munmap(p, size); /* placed elsewhere: the range after the block was taken */
  return 0;
}

void prim_unmap(void *p, size_t size) {
  munmap(p, size);
}

void *prim_reserve(size_t size, int top_down) {
  (void)top_down; /* as prim_map */
  /* Not MAP_NORESERVE: the kernel then charges (and may refuse) what prim_commit makes
   * writable, as it would a read/write mapping; an inaccessible one costs no charge. */
  return map_aligned(size, PROT_NONE);
}

int prim_commit(void *at, size_t size) {
  if (prim_fail_maps)
    return 0;
  return mprotect(at, size, PROT_READ | PROT_WRITE) == 0;
}

void prim_decommit(void *at, size_t size) {
  /* A fresh inaccessible mapping over the range drops its pages (and their commit charge) and
   * keeps the addresses. */
  mmap(at, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
}

static int reserve_exactly_at(void *at, size_t size) {
#ifdef MAP_FIXED_NOREPLACE
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
#else
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
#endif
  void *p = mmap(at, size, PROT_NONE, flags, -1, 0);
  if (p == at)
    return 1;
  if (p != MAP_FAILED)
    munmap(p, size);
  return 0;
}

size_t prim_reserve_after(void *at, size_t min, size_t want) {
  if (prim_fail_maps)
    return 0;
  /* mmap cannot say how much is free after `at`: try all that is wanted, then the least. */
  if (reserve_exactly_at(at, want))
    return want;
  return min < want && reserve_exactly_at(at, min) ? min : 0;
}

int prim_remap(void *base, size_t committed, size_t reserved, void *to, size_t new_committed) {
#if defined(__linux__) && defined(MREMAP_FIXED)
  /* The committed pages move onto `to` (page tables, not bytes), grown to new_committed; the
   * pages that were there are dropped. */
  void *r = mremap(base, committed, new_committed, MREMAP_MAYMOVE | MREMAP_FIXED, to);
  if (r != to)
    return 0; /* e.g. the range is several mappings the kernel would not merge */
  if (reserved > committed)
    munmap((char *)base + committed, reserved - committed);
  return 1;
#else
  (void)base;
  (void)committed;
  (void)reserved;
  (void)to;
  (void)new_committed;
  return 0;
#endif
}

typedef union thread_fn {
  void (*fn)(void);
  void *arg;
} thread_fn;

/* The manager's own thread: detached. Once one has started, the library is never unloaded
 * (RTLD_NODELETE), so its code stays mapped while the thread runs and after it returns. */
static void *thread_main(void *arg) {
  thread_fn f;
  f.arg = arg;
  f.fn();
  return NULL;
}

int prim_start_thread(void (*fn)(void)) {
  pthread_t t;
  pthread_attr_t attr;
  thread_fn f;
  f.fn = fn;
  static int pinned;
  if (!pinned) {
    Dl_info info;
    if (dladdr((void *)thread_main, &info) && info.dli_fname != NULL)
      dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD | RTLD_NODELETE);
    pinned = 1;
  }
  if (pthread_attr_init(&attr) != 0)
    return 0;
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 256 * 1024); /* room for sanitizers' frames */
  int ok = pthread_create(&t, &attr, thread_main, f.arg) == 0;
  pthread_attr_destroy(&attr);
  return ok;
}

void prim_sleep_ms(unsigned ms) {
  struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

size_t prim_page_size(void) {
  static size_t size;
  if (size == 0)
    size = (size_t)sysconf(_SC_PAGESIZE);
  return size;
}

void prim_yield(void) {
  sched_yield();
}

unsigned prim_cpu_count(void) {
  long n = 0;
#if defined(__linux__)
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0)
    n = CPU_COUNT(&set);
#endif
  if (n <= 0)
    n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? (unsigned)n : 1u;
}

uint32_t prim_thread_id(void) {
#if defined(__linux__)
  /* Asked on every debug-mode call: one system call each was a tenth of debug mode's cost.
   * A child of fork() keeps its parent's number in the forking thread: the number only labels
   * blocks and picks arenas. */
  static __thread uint32_t tid;
  if (tid == 0)
    tid = (uint32_t)syscall(SYS_gettid);
  return tid;
#else
  return (uint32_t)(uintptr_t)pthread_self();
#endif
}

/* The barrier of prim_barrier_other_threads: Linux's membarrier (private expedited: an
 * interrupt to every CPU running a thread of this process), or else a page whose protection is
 * lowered, which the kernel makes every such CPU drop from its TLB by the same kind of
 * interrupt (an interrupt orders the stores and loads around it). 0 not set up yet, 1
 * membarrier, 2 the page, 3 neither. */
#if defined(__linux__)
#define PRIM_MEMBARRIER_PRIVATE_EXPEDITED 8
#define PRIM_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED 16
#endif
static int barrier_kind;
static void *barrier_page;

/* The page of barrier_by_page, mapped once (a racing thread's stands). Set up even where
 * membarrier serves: a forked child is not registered for it and falls back to the page. */
static void *barrier_page_get(void) {
  void *page = __atomic_load_n(&barrier_page, __ATOMIC_ACQUIRE);
  if (page != NULL)
    return page;
  size_t size = (size_t)sysconf(_SC_PAGESIZE);
  page = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED)
    return NULL;
  void *none = NULL;
  if (__atomic_compare_exchange_n(&barrier_page, &none, page, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE))
    return page;
  munmap(page, size);
  return none;
}

int prim_barrier_ready(void) {
  int kind = __atomic_load_n(&barrier_kind, __ATOMIC_ACQUIRE);
  if (kind != 0)
    return kind != 3;
  kind = barrier_page_get() != NULL ? 2 : 3;
#if defined(__linux__) && defined(SYS_membarrier)
  if (syscall(SYS_membarrier, PRIM_MEMBARRIER_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
    kind = 1;
#endif
  int unset = 0;
  if (!__atomic_compare_exchange_n(&barrier_kind, &unset, kind, 0, __ATOMIC_ACQ_REL,
                                   __ATOMIC_ACQUIRE))
    kind = unset; /* a racing thread's answer stands */
  return kind != 3;
}

static void barrier_by_page(void) {
  void *page = barrier_page_get();
  if (page == NULL)
    return;
  size_t size = (size_t)sysconf(_SC_PAGESIZE);
  /* Written, so the page is present; then made inaccessible, which is what takes its
   * translation from every CPU. */
  mprotect(page, size, PROT_READ | PROT_WRITE);
  __atomic_store_n((volatile char *)page, 1, __ATOMIC_SEQ_CST);
  mprotect(page, size, PROT_NONE);
}

void prim_barrier_other_threads(void) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
#if defined(__linux__) && defined(SYS_membarrier)
  if (__atomic_load_n(&barrier_kind, __ATOMIC_ACQUIRE) == 1 &&
      syscall(SYS_membarrier, PRIM_MEMBARRIER_PRIVATE_EXPEDITED, 0, 0) == 0) {
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return;
  }
#endif
  barrier_by_page();
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

uint64_t prim_time_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint32_t prim_tick_count_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

void prim_debug_break(void) {
  raise(SIGTRAP);
}

#if defined(__GLIBC__)
/* 1 while the thread is inside backtrace(): its first call loads libgcc_s with dlopen, which
 * allocates, and when the manager is the process's malloc (libfastmmc-malloc.so) in debug mode
 * that allocation asks for a stack trace again. The inner one gets none. */
static __thread int capturing __attribute__((tls_model("initial-exec")));
#endif

size_t prim_capture_stack(void **frames, size_t max_frames, size_t skip) {
#if defined(__GLIBC__)
  void *all[128];
  size_t want = max_frames + skip + 1;
  if (want > 128)
    want = 128;
  if (capturing)
    return 0;
  capturing = 1;
  int n = backtrace(all, (int)want);
  capturing = 0;
  size_t got = 0;
  for (int i = (int)skip + 1; i < n && got < max_frames; i++)
    frames[got++] = all[i];
  return got;
#else
  (void)frames;
  (void)max_frames;
  (void)skip;
  return 0;
#endif
}

static void (*fork_child_fns[PRIM_FORK_CHILD_MAX])(void);
static unsigned fork_child_count;

static void run_fork_child(void) {
  for (unsigned i = 0; i < fork_child_count; i++)
    fork_child_fns[i]();
}

/* Called while the heap starts, before any thread could fork. */
void prim_on_fork_child(void (*fn)(void)) {
  for (unsigned i = 0; i < fork_child_count; i++)
    if (fork_child_fns[i] == fn)
      return;
  if (fork_child_count == PRIM_FORK_CHILD_MAX)
    return;
  fork_child_fns[fork_child_count++] = fn;
  if (fork_child_count == 1)
    pthread_atfork(NULL, NULL, run_fork_child);
}

void prim_on_fork(void (*before)(void), void (*parent)(void), void (*child)(void)) {
  pthread_atfork(before, parent, child);
}

static void on_key_destroyed(void *value) {
  if (value != NULL && thread_exit_fn != NULL) {
    thread_exit_fn(value);
    prim_tls_value = (void *)prim_tls_unset;
  }
}

static void make_exit_key(void) {
  pthread_key_create(&exit_key, on_key_destroyed);
}

void prim_init(prim_thread_exit_fn on_thread_exit) {
  thread_exit_fn = on_thread_exit;
  pthread_once(&exit_key_once, make_exit_key);
}

void prim_tls_set(void *value) {
  prim_tls_value = value;
  pthread_setspecific(exit_key, value);
}
#endif

size_t prim_describe_address(const void *addr, char *buf, size_t size) {
  Dl_info info;
  if (dladdr(addr, &info) && info.dli_fname && info.dli_fbase) {
    const char *name = strrchr(info.dli_fname, '/');
    name = name ? name + 1 : info.dli_fname;
    int n = snprintf(buf, size, "%s+0x%lx", name,
                     (unsigned long)((uintptr_t)addr - (uintptr_t)info.dli_fbase));
    return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
  }
  int n = snprintf(buf, size, "0x%lx", (unsigned long)(uintptr_t)addr);
  return n < 0 ? 0 : (size_t)n < size ? (size_t)n : size - 1;
}

/* Whether memory can be read: the kernel answers EFAULT to a write() from an unreadable
 * buffer, where reading it ourselves would fault. */
static int probe_pipe[2] = {-1, -1};
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;

int prim_readable(const void *p, size_t size) {
  int ok = 1;
  pthread_mutex_lock(&probe_lock);
  if (probe_pipe[0] < 0 && pipe(probe_pipe) != 0) {
    pthread_mutex_unlock(&probe_lock);
    return 0;
  }
  const char *cur = (const char *)p;
  while (size > 0 && ok) {
    size_t chunk = size < 512 ? size : 512;
    ssize_t w = write(probe_pipe[1], cur, chunk);
    if (w < 0) {
      ok = 0;
      break;
    }
    char sink[512];
    if (read(probe_pipe[0], sink, (size_t)w) != w)
      ok = 0;
    cur += w;
    size -= (size_t)w;
  }
  pthread_mutex_unlock(&probe_lock);
  return ok;
}

size_t prim_program_path(char *buf, size_t size) {
  ssize_t n = readlink("/proc/self/exe", buf, size);
  return n > 0 && (size_t)n < size ? (size_t)n : 0;
}

size_t prim_getenv(const char *name, char *buf, size_t size) {
  const char *v = getenv(name);
  if (v == NULL)
    return 0;
  size_t n = strlen(v);
  if (n >= size)
    return 0;
  memcpy(buf, v, n + 1);
  return n;
}

/* Opens `path` with `mode_flags` (O_APPEND or O_TRUNC) and writes all of `text`. */
static int write_all(const char *path, int mode_flags, const char *text, size_t length) {
  int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC | mode_flags, 0644);
  if (fd < 0)
    return 0;
  size_t done = 0;
  while (done < length) {
    ssize_t w = write(fd, text + done, length - done);
    if (w <= 0 && errno != EINTR)
      break;
    if (w > 0)
      done += (size_t)w;
  }
  close(fd);
  return done == length;
}

int prim_append_file(const char *path, const char *text, size_t length) {
  return write_all(path, O_APPEND, text, length);
}

int prim_write_file(const char *path, const char *text, size_t length) {
  return write_all(path, O_TRUNC, text, length);
}

void prim_debug_output(const char *text) {
  ssize_t r = write(2, text, strlen(text));
  (void)r;
}

void prim_raise_fatal(void) {
  abort();
}

void prim_local_time(char *buf, size_t size) {
  time_t now = time(NULL);
  struct tm t;
  localtime_r(&now, &t);
  strftime(buf, size, "%Y/%m/%d %H:%M:%S", &t);
}

static void (*process_exit_fns[PRIM_PROCESS_EXIT_MAX])(void);

void prim_on_process_exit(void (*fn)(void)) {
  for (int i = 0; i < PRIM_PROCESS_EXIT_MAX; i++)
    if (process_exit_fns[i] == NULL || process_exit_fns[i] == fn) {
      process_exit_fns[i] = fn;
      return;
    }
}

__attribute__((destructor)) static void run_process_exit(void) {
  for (int i = 0; i < PRIM_PROCESS_EXIT_MAX && process_exit_fns[i] != NULL; i++)
    process_exit_fns[i]();
}

struct module_file_query {
  uintptr_t addr, begin, end, bias;
  const char *name;
  int found, first, is_program;
};

static int find_module_file(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  struct module_file_query *q = (struct module_file_query *)data;
  int first = q->first;
  q->first = 0;
  uintptr_t lo = UINTPTR_MAX, hi = 0;
  for (unsigned i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD)
      continue;
    uintptr_t b = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
    if (b < lo)
      lo = b;
    if (b + ph->p_memsz > hi)
      hi = b + ph->p_memsz;
  }
  if (q->addr < lo || q->addr >= hi)
    return 0;
  q->begin = lo;
  q->end = hi;
  q->bias = (uintptr_t)info->dlpi_addr;
  q->name = info->dlpi_name;
  /* The program comes first, with no name. */
  q->is_program = first && (info->dlpi_name == NULL || info->dlpi_name[0] == 0);
  q->found = 1;
  return 1;
}

int prim_module_range(const void *addr, uintptr_t *begin, uintptr_t *end) {
  struct module_file_query q;
  memset(&q, 0, sizeof q);
  q.addr = (uintptr_t)addr;
  dl_iterate_phdr(find_module_file, &q);
  *begin = q.begin;
  *end = q.end;
  return q.found;
}

static uintptr_t program_begin;

int prim_module_file(const void *addr, uintptr_t *begin, uintptr_t *end, uintptr_t *bias,
                     char *path, size_t size) {
  struct module_file_query q;
  memset(&q, 0, sizeof q);
  q.addr = (uintptr_t)addr;
  q.first = 1;
  dl_iterate_phdr(find_module_file, &q);
  if (!q.found || size == 0)
    return 0;
  size_t n = 0;
  if (q.is_program) {
    program_begin = q.begin;
    ssize_t got = readlink("/proc/self/exe", path, size - 1);
    n = got > 0 ? (size_t)got : 0;
  } else {
    while (q.name[n] && n + 1 < size) {
      path[n] = q.name[n];
      n++;
    }
  }
  path[n] = 0;
  *begin = q.begin;
  *end = q.end;
  *bias = q.bias;
  return n > 0;
}

int prim_is_program_module(uintptr_t begin) {
  return begin != 0 && begin == program_begin;
}

void *prim_read_file(const char *path, size_t max, size_t *size, size_t *mapped) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return NULL;
  struct stat st;
  char *p = NULL;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= max) {
    size_t want = (size_t)st.st_size, got = 0;
    *mapped = want + 1;
    p = (char *)prim_map(*mapped, 0);
    while (p != NULL && got < want) {
      ssize_t r = read(fd, p + got, want - got);
      if (r < 0 && errno == EINTR)
        continue;
      if (r <= 0)
        break;
      got += (size_t)r;
    }
    if (p != NULL && got != want) {
      prim_unmap(p, *mapped);
      p = NULL;
    }
    *size = want;
  }
  close(fd);
  return p;
}

uint64_t prim_file_time(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && st.st_mtime > 0 ? (uint64_t)st.st_mtime : 0;
}

int prim_pdb_lookup(const void *addr, char *routine, size_t routine_size, char *file,
                    size_t file_size, unsigned *line) {
  (void)addr;
  (void)routine;
  (void)routine_size;
  (void)file;
  (void)file_size;
  (void)line;
  return 0;
}

const void *prim_direct_call_target(const void *return_address) {
  (void)return_address;
  return NULL;
}

int prim_dynamic_symbol(const void *addr, char *name, size_t size, uintptr_t *start) {
  Dl_info info;
  if (size == 0 || !dladdr(addr, &info) || info.dli_sname == NULL || info.dli_saddr == NULL)
    return 0;
  size_t n = 0;
  while (info.dli_sname[n] && n + 1 < size) {
    name[n] = info.dli_sname[n];
    n++;
  }
  name[n] = 0;
  *start = (uintptr_t)info.dli_saddr;
  return 1;
}
