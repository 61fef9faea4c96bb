/* SPDX-License-Identifier: MIT */
/* The usage report: one self-contained HTML page (inline style and SVG, no script, nothing
 * fetched from elsewhere) with what FastMM's usage tracker shows in a window, from three
 * sources taken one after the other:
 *   - the state (heap_get_state), in a table;
 *   - the page map: every 64 KB region the manager holds, drawn as one cell of the address-space
 *     map, coloured by what the region holds (large block, small spans, medium blocks, or
 *     nothing: the spare span) and filled from the bottom as far as its blocks are in use;
 *   - the walk of the blocks (core/walk.c): what fills each region, the usage of each small size
 *     class, and the largest blocks in use.
 * Every number also sits in a data- attribute, so a program (tests/test_usage_report.c) can read
 * the page back. Like every report of the manager it allocates nothing from the heap: its
 * buffers are mapped from the OS, and it writes the file as it goes. */
#include "usage_report.h"

#include <string.h>

#include "core/heap.h"
#include "core/page_map.h"
#include "core/policy.h"
#include "core/size_class.h"
#include "core/walk.h"
#include "prim/prim.h"

#define REGION_BYTES ((uintptr_t)1 << PAGE_MAP_REGION_SHIFT)
#define MAP_COLUMNS 64u           /* cells per row of the map: 4 MB */
#define MAP_CELL 12u              /* pixels */
#define MAP_PITCH (MAP_CELL + 1u) /* a cell and the gap after it */
#define MAP_LABEL_WIDTH 150u
#define MAP_MAX_REGIONS 65536u /* 4 GB drawn at most; the page says when it stops there */
#define LARGEST_SHOWN 20u
#define PAGE_BUFFER (64u * 1024u)

/* ---- the page, written as it is built ------------------------------------------------------ */

typedef struct page {
  const char *path;
  char *buf;
  size_t n;
  int ok;
} page;

static void flush(page *pg) {
  if (pg->n != 0 && !prim_append_file(pg->path, pg->buf, pg->n))
    pg->ok = 0;
  pg->n = 0;
}

static void put(page *pg, const char *s) {
  for (; *s; s++) {
    if (pg->n == PAGE_BUFFER)
      flush(pg);
    pg->buf[pg->n++] = *s;
  }
}

static void put_dec(page *pg, uint64_t v) {
  char tmp[24];
  int n = (int)sizeof tmp - 1;
  tmp[n] = 0;
  do {
    tmp[--n] = (char)('0' + v % 10u);
    v /= 10u;
  } while (v != 0);
  put(pg, tmp + n);
}

static void put_hex(page *pg, uintptr_t v) {
  char tmp[2 * sizeof(uintptr_t) + 3];
  int n = (int)sizeof tmp - 1;
  tmp[n] = 0;
  for (unsigned d = 0; d < 2 * sizeof(uintptr_t); d++) {
    tmp[--n] = "0123456789abcdef"[v & 15u];
    v >>= 4;
  }
  tmp[--n] = 'x';
  tmp[--n] = '0';
  put(pg, tmp + n);
}

/* A byte count as people read it: "12.5 MB" (one decimal from KB on). */
static void put_size(page *pg, uint64_t bytes) {
  static const char *const units[] = {" bytes", " KB", " MB", " GB", " TB"};
  unsigned u = 0;
  uint64_t whole = bytes, tenths = 0;
  while (whole >= 1024u && u + 1 < sizeof units / sizeof units[0]) {
    tenths = (whole % 1024u) * 10u / 1024u;
    whole /= 1024u;
    u++;
  }
  put_dec(pg, whole);
  if (u > 0) {
    put(pg, ".");
    put_dec(pg, tenths);
  }
  put(pg, units[u]);
}

static void put_escaped(page *pg, const char *s) {
  char one[2] = {0, 0};
  for (; *s; s++) {
    switch (*s) {
    case '<':
      put(pg, "&lt;");
      break;
    case '>':
      put(pg, "&gt;");
      break;
    case '&':
      put(pg, "&amp;");
      break;
    case '"':
      put(pg, "&quot;");
      break;
    default:
      one[0] = *s;
      put(pg, one);
    }
  }
}

/* `percent` as "12.3" from a part and a whole. */
static void put_percent(page *pg, uint64_t part, uint64_t whole) {
  uint64_t tenths = whole ? (part * 1000u + whole / 2u) / whole : 0;
  put_dec(pg, tenths / 10u);
  put(pg, ".");
  put_dec(pg, tenths % 10u);
}

/* ---- what the walk finds --------------------------------------------------------------------- */

enum region_kind { KIND_LARGE, KIND_MEDIUM, KIND_SMALL, KIND_SPARE, KIND_COUNT };
static const char *const kind_names[KIND_COUNT] = {"large", "medium", "small", "spare"};
static const char *const kind_titles[KIND_COUNT] = {
    "large block", "medium blocks", "small blocks (small spans)", "held, no block (spare span)"};
static const char *const kind_colours[KIND_COUNT] = {"#4e79a7", "#f28e2b", "#59a14f", "#bab0ac"};

typedef struct region {
  uintptr_t index;      /* address >> 16 */
  uint32_t in_use;      /* bytes of blocks in use in it */
  uint32_t small_spans; /* bytes of small spans in it */
  uint32_t covered;     /* bytes of it a live span or large block covers */
  uint8_t map_kind;     /* the page map's word */
} region;

typedef struct usage {
  region *regions;
  size_t region_count, region_bytes;
  uint64_t class_blocks[SMALL_CLASS_COUNT], class_bytes[SMALL_CLASS_COUNT];
  uint64_t class_reserved[SMALL_CLASS_COUNT];
  uint64_t medium_blocks, medium_bytes, large_blocks, large_bytes;
  fastmm_block_info largest[LARGEST_SHOWN];
  size_t largest_count;
} usage;

static region *region_of(usage *u, uintptr_t index) {
  size_t lo = 0, hi = u->region_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2u;
    if (u->regions[mid].index < index)
      lo = mid + 1u;
    else
      hi = mid;
  }
  return lo < u->region_count && u->regions[lo].index == index ? &u->regions[lo] : NULL;
}

enum region_field { FIELD_IN_USE, FIELD_SMALL_SPANS, FIELD_COVERED };

/* Adds [start, start + length) to the regions it lies in. */
static void add_range(usage *u, uintptr_t start, size_t length, int field) {
  uintptr_t end = start + length;
  while (start < end) {
    uintptr_t index = start >> PAGE_MAP_REGION_SHIFT;
    uintptr_t region_end = (index + 1u) << PAGE_MAP_REGION_SHIFT;
    uint32_t piece = (uint32_t)((end < region_end ? end : region_end) - start);
    region *g = region_of(u, index);
    if (g != NULL) {
      if (field == FIELD_IN_USE)
        g->in_use += piece;
      else if (field == FIELD_SMALL_SPANS)
        g->small_spans += piece;
      else
        g->covered += piece;
    }
    start += piece;
  }
}

static unsigned class_of_slot(size_t slot) {
  unsigned c = 0;
  while (c + 1u < SMALL_CLASS_COUNT && size_class_slot[c] < slot)
    c++;
  return c;
}

static void keep_if_largest(usage *u, const fastmm_block_info *info) {
  size_t n = u->largest_count;
  if (n == LARGEST_SHOWN && info->usable_size <= u->largest[n - 1].usable_size)
    return;
  size_t at = n < LARGEST_SHOWN ? n : n - 1u;
  while (at > 0 && u->largest[at - 1].usable_size < info->usable_size) {
    u->largest[at] = u->largest[at - 1];
    at--;
  }
  u->largest[at] = *info;
  if (n < LARGEST_SHOWN)
    u->largest_count++;
}

static void FASTMM_CDECL on_block(const fastmm_block_info *info, void *context) {
  usage *u = (usage *)context;
  uintptr_t a = (uintptr_t)info->block_address;
  switch (info->block_type) {
  case FASTMM_BLOCK_MEDIUM_SPAN:
    add_range(u, a, info->block_size, FIELD_COVERED);
    return;
  case FASTMM_BLOCK_SMALL_SPAN: {
    /* The span is a medium block: its header lies before it. */
    add_range(u, a - MEDIUM_HEADER_SIZE, info->block_size, FIELD_SMALL_SPANS);
    u->class_reserved[class_of_slot(info->small_block_span_block_size)] += info->block_size;
    return;
  }
  default:
    break;
  }
  if (info->block_is_free)
    return;
  keep_if_largest(u, info);
  if (info->block_type == FASTMM_BLOCK_SMALL) {
    unsigned c = class_of_slot(info->block_size);
    u->class_blocks[c]++;
    u->class_bytes[c] += info->block_size - BLOCK_HEADER_SIZE;
    /* A debug block's address is inside its slot: the slot is counted from its header word. */
    add_range(u, a - BLOCK_HEADER_SIZE, info->block_size, FIELD_IN_USE);
  } else if (info->block_type == FASTMM_BLOCK_MEDIUM) {
    u->medium_blocks++;
    u->medium_bytes += info->block_size - MEDIUM_HEADER_SIZE;
    add_range(u, a - MEDIUM_HEADER_SIZE, info->block_size, FIELD_IN_USE);
  } else if (info->block_type == FASTMM_BLOCK_LARGE) {
    /* A large block's mapping starts at the 64 KB boundary its header word lies in. */
    uintptr_t start = (a - BLOCK_HEADER_SIZE) & ~(REGION_BYTES - 1u);
    u->large_blocks++;
    u->large_bytes += info->block_size - (a - start);
    add_range(u, start, info->block_size, FIELD_COVERED);
    add_range(u, start, info->block_size, FIELD_IN_USE);
  }
}

/* Every region the page map marks, lowest first, into u->regions (at most `room`); returns how
 * many there are (more than `room` when they did not all fit). */
static size_t collect_regions(usage *u, size_t room) {
  size_t n = 0;
  for (uintptr_t i1 = 0; i1 < ((uintptr_t)1 << PAGE_MAP_L1_BITS); i1++) {
    const uint8_t *l2 = (const uint8_t *)fmm_load_ptr_acquire(&page_map_l1[i1]);
    if (l2 == NULL)
      continue;
    for (uintptr_t i2 = 0; i2 < ((uintptr_t)1 << PAGE_MAP_L2_BITS); i2++) {
      uint8_t kind = l2[i2];
      if (kind == REGION_NOT_OURS)
        continue;
      if (n < room) {
        region *g = &u->regions[n];
        memset(g, 0, sizeof *g);
        g->index = (i1 << PAGE_MAP_L2_BITS) | i2;
        g->map_kind = kind;
      }
      n++;
    }
  }
  return n;
}

static int gather(usage *u) {
  size_t room = 0, found;
  for (;;) {
    found = collect_regions(u, room);
    if (found <= room)
      break;
    if (u->regions != NULL)
      prim_unmap(u->regions, u->region_bytes);
    room = found + 256u; /* the heap may grow meanwhile */
    u->region_bytes = (room * sizeof(region) + REGION_BYTES - 1u) & ~(REGION_BYTES - 1u);
    u->regions = (region *)prim_map(u->region_bytes, 0);
    if (u->regions == NULL)
      return 0;
  }
  u->region_count = found;
  return 1;
}

static unsigned kind_of(const region *g) {
  if (!region_is_medium(g->map_kind))
    return KIND_LARGE;
  if (g->covered == 0)
    return KIND_SPARE;
  uint32_t medium_part = g->covered - (g->small_spans < g->covered ? g->small_spans : g->covered);
  return g->small_spans >= medium_part ? KIND_SMALL : KIND_MEDIUM;
}

/* ---- the page ------------------------------------------------------------------------------ */

static const char style[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#222}"
    "h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px}"
    ".meta{color:#666;font-size:13px}"
    "table{border-collapse:collapse;font-size:13px}"
    "th,td{padding:3px 10px;border-bottom:1px solid #e4e4e4;text-align:right}"
    "th:first-child,td:first-child{text-align:left}thead th{background:#f4f4f4}"
    ".bar{width:220px;height:11px;background:#e8efe6;position:relative}"
    ".bar span{position:absolute;left:0;top:0;bottom:0;background:#59a14f}"
    ".legend span{display:inline-block;width:12px;height:12px;margin:0 5px 0 16px;"
    "vertical-align:-1px}"
    "svg text{font:11px monospace;fill:#555}";

static void put_kind_row(page *pg, const char *name, const char *key, const fastmm_kind_usage *k) {
  put(pg, "<tr data-key=\"");
  put(pg, key);
  put(pg, "\" data-blocks=\"");
  put_dec(pg, k->blocks_in_use);
  put(pg, "\" data-bytes=\"");
  put_dec(pg, k->bytes_in_use);
  put(pg, "\" data-reserved=\"");
  put_dec(pg, k->bytes_reserved);
  put(pg, "\"><td>");
  put(pg, name);
  put(pg, "</td><td>");
  put_dec(pg, k->blocks_in_use);
  put(pg, "</td><td>");
  put_size(pg, k->bytes_in_use);
  put(pg, "</td><td>");
  put_size(pg, k->bytes_reserved);
  put(pg, "</td></tr>\n");
}

/* A row of the walk's medium or large totals: the numbers in data attributes (the test reads
 * them) and as text. */
static void put_walked_kind_row(page *pg, const char *kind, uint64_t blocks, uint64_t bytes) {
  put(pg, "<tr data-kind=\"");
  put(pg, kind);
  put(pg, "\" data-blocks=\"");
  put_dec(pg, blocks);
  put(pg, "\" data-bytes=\"");
  put_dec(pg, bytes);
  put(pg, "\"><td>");
  put(pg, kind);
  put(pg, " blocks in use (walk)</td><td>");
  put_dec(pg, blocks);
  put(pg, "</td><td>");
  put_size(pg, bytes);
  put(pg, "</td></tr>\n");
}

static void put_value_row(page *pg, const char *name, const char *key, uint64_t v, int bytes) {
  put(pg, "<tr data-key=\"");
  put(pg, key);
  put(pg, "\" data-value=\"");
  put_dec(pg, v);
  put(pg, "\"><td>");
  put(pg, name);
  put(pg, "</td><td colspan=\"3\">");
  if (bytes)
    put_size(pg, v);
  else
    put_dec(pg, v);
  put(pg, "</td></tr>\n");
}

static void put_state(page *pg, const fastmm_state *st) {
  put(pg, "<h2>State</h2>\n<table id=\"state\"><thead><tr><th></th><th>blocks in use</th>"
          "<th>bytes in use</th><th>memory held</th></tr></thead><tbody>\n");
  put_kind_row(pg, "small blocks", "small", &st->small);
  put_kind_row(pg, "medium blocks", "medium", &st->medium);
  put_kind_row(pg, "large blocks", "large", &st->large);
  put_value_row(pg, "mapped from the OS now", "os_bytes_reserved", st->os_bytes_reserved, 1);
  put_value_row(pg, "mapped at the peak", "os_bytes_peak", st->os_bytes_peak, 1);
  put_value_row(pg, "mappings", "os_map_calls", st->os_map_calls, 0);
  put_value_row(pg, "mappings given back", "os_unmap_calls", st->os_unmap_calls, 0);
  put_value_row(pg, "free small blocks in thread caches", "thread_cached_blocks",
                st->thread_cached_blocks, 0);
  put(pg, "</tbody></table>\n");
}

static void put_rect(page *pg, unsigned x, unsigned y, unsigned w, unsigned h, const char *fill,
                     const char *opacity) {
  put(pg, "<rect x=\"");
  put_dec(pg, x);
  put(pg, "\" y=\"");
  put_dec(pg, y);
  put(pg, "\" width=\"");
  put_dec(pg, w);
  put(pg, "\" height=\"");
  put_dec(pg, h);
  put(pg, "\" fill=\"");
  put(pg, fill);
  if (opacity != NULL) {
    put(pg, "\" fill-opacity=\"");
    put(pg, opacity);
  }
  put(pg, "\"/>");
}

/* The address-space map: one cell per region, MAP_COLUMNS to a row; each run of adjacent regions
 * starts a row of its own, labelled with its address. */
static void put_map(page *pg, const usage *u) {
  size_t shown = u->region_count < MAP_MAX_REGIONS ? u->region_count : MAP_MAX_REGIONS;
  size_t per_kind[KIND_COUNT] = {0};
  unsigned rows = 0, column = MAP_COLUMNS;
  for (size_t i = 0; i < shown; i++) {
    per_kind[kind_of(&u->regions[i])]++;
    if (i == 0 || u->regions[i].index != u->regions[i - 1].index + 1u || column == MAP_COLUMNS) {
      rows++;
      column = 0;
    }
    column++;
  }
  put(pg, "<h2>Address space</h2>\n<p class=\"legend\" id=\"map-legend\">");
  for (unsigned k = 0; k < KIND_COUNT; k++) {
    put(pg, "<span style=\"background:");
    put(pg, kind_colours[k]);
    put(pg, "\"></span><b data-kind=\"");
    put(pg, kind_names[k]);
    put(pg, "\" data-regions=\"");
    put_dec(pg, per_kind[k]);
    put(pg, "\">");
    put(pg, kind_titles[k]);
    put(pg, ": ");
    put_dec(pg, per_kind[k]);
    put(pg, "</b>");
  }
  put(pg, "</p>\n<p class=\"meta\">Each cell is a 64 KB region the manager holds, coloured by "
          "what it holds and filled from the bottom as far as blocks in use fill it; "
          "each row is 4 MB, and each run of adjacent regions starts a row with its address.");
  if (shown < u->region_count) {
    put(pg, " The first ");
    put_dec(pg, shown);
    put(pg, " of ");
    put_dec(pg, u->region_count);
    put(pg, " regions are drawn.");
  }
  put(pg, "</p>\n<svg id=\"map\" xmlns=\"http://www.w3.org/2000/svg\" data-regions=\"");
  put_dec(pg, u->region_count);
  put(pg, "\" width=\"");
  put_dec(pg, MAP_LABEL_WIDTH + MAP_COLUMNS * MAP_PITCH);
  put(pg, "\" height=\"");
  put_dec(pg, rows * MAP_PITCH + 4u);
  put(pg, "\">\n");
  unsigned row = 0;
  column = 0;
  for (size_t i = 0; i < shown; i++) {
    const region *g = &u->regions[i];
    if (i == 0 || g->index != u->regions[i - 1].index + 1u || column == MAP_COLUMNS) {
      if (i > 0)
        row++;
      column = 0;
      put(pg, "<text x=\"0\" y=\"");
      put_dec(pg, row * MAP_PITCH + MAP_CELL - 2u);
      put(pg, "\">");
      put_hex(pg, g->index << PAGE_MAP_REGION_SHIFT);
      put(pg, "</text>\n");
    }
    unsigned x = MAP_LABEL_WIDTH + column * MAP_PITCH, y = row * MAP_PITCH;
    unsigned kind = kind_of(g);
    uint32_t in_use = g->in_use < REGION_BYTES ? g->in_use : (uint32_t)REGION_BYTES;
    unsigned filled = (unsigned)(((uint64_t)in_use * MAP_CELL + REGION_BYTES / 2u) / REGION_BYTES);
    put_rect(pg, x, y, MAP_CELL, MAP_CELL, kind_colours[kind], "0.25");
    if (filled > 0)
      put_rect(pg, x, y + MAP_CELL - filled, MAP_CELL, filled, kind_colours[kind], NULL);
    column++;
    if (column == MAP_COLUMNS || i + 1 == shown)
      put(pg, "\n");
  }
  put(pg, "</svg>\n");
}

static void put_classes(page *pg, const usage *u) {
  put(pg, "<h2>Small size classes</h2>\n<table id=\"classes\"><thead><tr><th>slot</th>"
          "<th>usable</th><th>blocks in use</th><th>bytes in use</th><th>spans</th>"
          "<th>slots in use</th><th></th></tr></thead><tbody>\n");
  for (unsigned c = 0; c < SMALL_CLASS_COUNT; c++) {
    if (u->class_blocks[c] == 0 && u->class_reserved[c] == 0)
      continue;
    uint64_t slot = size_class_slot[c];
    uint64_t filled = u->class_blocks[c] * slot;
    put(pg, "<tr data-slot=\"");
    put_dec(pg, slot);
    put(pg, "\" data-blocks=\"");
    put_dec(pg, u->class_blocks[c]);
    put(pg, "\" data-bytes=\"");
    put_dec(pg, u->class_bytes[c]);
    put(pg, "\" data-reserved=\"");
    put_dec(pg, u->class_reserved[c]);
    put(pg, "\"><td>");
    put_dec(pg, slot);
    put(pg, "</td><td>");
    put_dec(pg, slot - BLOCK_HEADER_SIZE);
    put(pg, "</td><td>");
    put_dec(pg, u->class_blocks[c]);
    put(pg, "</td><td>");
    put_size(pg, u->class_bytes[c]);
    put(pg, "</td><td>");
    put_size(pg, u->class_reserved[c]);
    put(pg, "</td><td>");
    put_percent(pg, filled, u->class_reserved[c]);
    put(pg, "%</td><td><div class=\"bar\"><span style=\"width:");
    put_percent(pg, filled < u->class_reserved[c] ? filled : u->class_reserved[c],
                u->class_reserved[c]);
    put(pg, "%\"></span></div></td></tr>\n");
  }
  put(pg, "</tbody></table>\n");
}

static void put_largest(page *pg, const usage *u) {
  static const char *const type_names[] = {"large", "medium span", "medium", "small span", "small"};
  put(pg, "<h2>Largest blocks in use</h2>\n<table id=\"largest\"><thead><tr><th>address</th>"
          "<th>kind</th><th>usable</th><th>block</th><th>arena</th></tr></thead><tbody>\n");
  for (size_t i = 0; i < u->largest_count; i++) {
    const fastmm_block_info *b = &u->largest[i];
    put(pg, "<tr data-address=\"");
    put_hex(pg, (uintptr_t)b->block_address);
    put(pg, "\" data-usable=\"");
    put_dec(pg, b->usable_size);
    put(pg, "\"><td>");
    put_hex(pg, (uintptr_t)b->block_address);
    put(pg, "</td><td>");
    put(pg, type_names[b->block_type < 5 ? b->block_type : 0]);
    put(pg, b->debug_header != NULL ? " (debug)" : "");
    put(pg, "</td><td>");
    put_size(pg, b->usable_size);
    put(pg, "</td><td>");
    put_size(pg, b->block_size);
    put(pg, "</td><td>");
    put_dec(pg, b->arena_index);
    put(pg, "</td></tr>\n");
  }
  put(pg, "</tbody></table>\n");
}

/* The program named in the subtitle: its file name, as a report is passed on (a bug report, a
 * picture) and the folder it ran from tells where a machine keeps its files, not what the heap
 * holds; FASTMMC_USAGE_REPORT_FULL_PATH=1 in the environment asks for the full path. Returns the
 * length written to `text` (NUL-terminated), 0 when the program is unknown. */
static size_t program_name(char *text, size_t size) {
  size_t n = prim_program_path(text, size - 1);
  text[n] = 0;
  char full[8];
  if (prim_getenv("FASTMMC_USAGE_REPORT_FULL_PATH", full, sizeof full) && full[0] != '0')
    return n;
  size_t start = n;
  while (start > 0 && text[start - 1] != '/' && text[start - 1] != '\\')
    start--;
  memmove(text, text + start, n - start + 1);
  return n - start;
}

int usage_report_write(const char *path) {
  if (path == NULL || path[0] == 0)
    return 0;
  heap_ensure_initialized();
  usage *u = (usage *)prim_map(sizeof(usage) + PAGE_BUFFER, 0);
  if (u == NULL)
    return 0;
  page pg = {path, (char *)(u + 1), 0, 1};
  fastmm_state st;
  heap_get_state(&st);
  int walked = gather(u) && heap_walk(on_block, u, 0, 0, 1000u, 0, UINT32_MAX);

  pg.ok = prim_write_file(path, "", 0);
  put(&pg, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
           "<title>fastmm-c usage report</title><style>");
  put(&pg, style);
  put(&pg, "</style></head><body>\n<h1>fastmm-c usage report</h1>\n<p class=\"meta\">");
  char text[1024];
  put_escaped(&pg, program_name(text, sizeof text) ? text : "(program unknown)");
  put(&pg, " &middot; ");
  prim_local_time(text, sizeof text);
  put_escaped(&pg, text);
  put(&pg, sizeof(void *) == 8 ? " &middot; 64-bit" : " &middot; 32-bit");
  put(&pg, " &middot; fastmm-c " FASTMM_VERSION_STRING);
  if (!walked)
    put(&pg, " &middot; <b>incomplete: an arena stayed locked</b>");
  put(&pg, "</p>\n");
  put_state(&pg, &st);
  if (u->regions != NULL)
    put_map(&pg, u);
  put_classes(&pg, u);
  put(&pg, "<h2>Medium and large blocks</h2>\n<table id=\"kinds\"><tbody>\n");
  put_walked_kind_row(&pg, "medium", u->medium_blocks, u->medium_bytes);
  put_walked_kind_row(&pg, "large", u->large_blocks, u->large_bytes);
  put(&pg, "</tbody></table>\n");
  put_largest(&pg, u);
  put(&pg, "</body></html>\n");
  flush(&pg);

  if (u->regions != NULL)
    prim_unmap(u->regions, u->region_bytes);
  prim_unmap(u, sizeof(usage) + PAGE_BUFFER);
  return pg.ok;
}
