/*
 * The baseline for bench/engine.ts: the same per-sample loop in plain C99,
 * as the reference application would run it (uint64_t ring of capacity
 * 2 * depth, the five rule types exactly as docs/spec/reference-semantics.md
 * §2-4 states them, the reference's order of work, rows formatted into a
 * buffer and fwrite()n to a file).
 *
 * The workload (columns, generator parameters, rule mix) is not repeated
 * here: it arrives on stdin as the text bench/mix.ts writes, so both
 * engines read one definition. run.ts compiles this with `cc -O2` into a
 * temp directory and compares the checksums it prints with the Deno ones.
 *
 *   cc -O2 -o /tmp/engine bench/engine.c
 *   deno run bench/mix.ts idle | /tmp/engine /tmp
 *
 * Output: one JSON line per timed repetition and a summary line on stdout,
 * a human line on stderr, with the same keys as engine.ts.
 */

#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { GT, LT, DT_GT, DT_LT, INC_GT };
enum { COUNTER, GAUGE };

#define MAX_COLUMNS 64
#define MAX_RULES 64
#define MAX_REPS 64
#define NAME_BYTES 256
/* The events writer's chunk size, as EventsLog's default. */
#define CHUNK_BYTES (256 * 1024)

typedef struct {
  int kind;
  uint64_t start;
  uint32_t base;
  uint32_t mask;
  char name[NAME_BYTES];
} column_t;

typedef struct {
  int kind;
  int column; /* data column; the ring value index is column + 1 */
  uint64_t value;
  uint64_t threshold; /* H: depth, or 1 for inc_gt */
  int active;
  uint64_t counter;
  int need_new_target;
  uint64_t target;
  char marker_name[2 * NAME_BYTES + 4]; /* "name" quoted, newline */
  size_t marker_name_len;
} rule_t;

/* The case, as read from stdin. */
static char case_name[NAME_BYTES];
static uint64_t depth;
static uint64_t warmup_samples, prefill_samples, timed_samples;
static int reps, keep_log;
static uint32_t seed, table_records;
static column_t columns[MAX_COLUMNS];
static int width; /* values per record: timestamp + data columns */
static int counters; /* leading counter columns (timestamp included) */
static rule_t rules[MAX_RULES];
static int rule_count;

/* The ring: capacity records of width values. */
static uint64_t *ring;
static uint64_t capacity, head, count;

/* The generator: one draw per column per table row; counter totals. */
static uint32_t *table;
static uint64_t totals[MAX_COLUMNS];
static uint32_t table_row;

/* The events writer. */
static FILE *log_file;
static char *chunk;
static size_t chunk_pos;
static uint64_t log_bytes;
static char column_names[MAX_COLUMNS * (NAME_BYTES + 2) + 16];
static size_t column_names_len;

/* Monitor state and checksum. */
static int active_rules;
static uint64_t samples;
static uint64_t transitions;
static uint32_t transition_hash;

static const uint32_t FNV_OFFSET = 0x811c9dc5u;
static const uint32_t FNV_PRIME = 0x01000193u;

/* FNV-1a over one 32-bit word, as engine.ts does it. */
static uint32_t fnv(uint32_t hash, uint32_t word) {
  return (hash ^ word) * FNV_PRIME;
}

static void die(const char *what) {
  fprintf(stderr, "engine.c: %s%s%s\n", what, errno ? ": " : "",
          errno ? strerror(errno) : "");
  exit(1);
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- events writer ---------------------------------------------------- */

static void write_chunk(void) {
  if (chunk_pos > 0 && fwrite(chunk, 1, chunk_pos, log_file) != chunk_pos) {
    die("cannot write events log");
  }
  log_bytes += chunk_pos;
  chunk_pos = 0;
}

static void reserve(size_t bytes) {
  if (chunk_pos + bytes > CHUNK_BYTES) write_chunk();
}

static void put_bytes(const char *bytes, size_t n) {
  reserve(n);
  memcpy(chunk + chunk_pos, bytes, n);
  chunk_pos += n;
}

static char *put_u64(char *p, uint64_t v) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) *p++ = digits[--n];
  return p;
}

/* One record as `ts, v0, v1, ...\n`. */
static void log_row(const uint64_t *record) {
  reserve((size_t)width * 22 + 1);
  char *p = chunk + chunk_pos;
  p = put_u64(p, record[0]);
  for (int k = 1; k < width; k++) {
    *p++ = ',';
    *p++ = ' ';
    p = put_u64(p, record[k]);
  }
  *p++ = '\n';
  chunk_pos = (size_t)(p - chunk);
}

/* `<<Event start>> Time: 2026-11-21T14:50:00Z, Rule: "name"\n` */
static void log_marker(const char *kind, const rule_t *rule) {
  char when[32];
  struct tm tm;
  time_t t = time(NULL);
  gmtime_r(&t, &tm);
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
  put_bytes(kind, strlen(kind));
  put_bytes(when, strlen(when));
  put_bytes(", Rule: ", 8);
  put_bytes(rule->marker_name, rule->marker_name_len);
}

/* ---- ring and rules --------------------------------------------------- */

static uint64_t *record_back(uint64_t back) {
  uint64_t index = head >= back ? head - back : head + capacity - back;
  return ring + index * (uint64_t)width;
}

/* Returns 1 when the rule changed state on this sample. */
static int evaluate(rule_t *r) {
  const int v = r->column + 1;
  const uint64_t cur = ring[head * (uint64_t)width + (uint64_t)v];
  int match;
  switch (r->kind) {
  case GT:
  case LT:
    match = r->kind == GT ? cur > r->value : cur < r->value;
    if (r->active != match) r->counter++;
    else r->counter = 0;
    break;
  case DT_GT:
  case DT_LT: {
    if (count <= r->threshold) break; /* needs H + 1 records */
    uint64_t delta = cur - record_back(r->threshold)[v]; /* mod 2^64 */
    match = r->kind == DT_GT ? delta > r->value : delta < r->value;
    if (!r->active && match) r->counter = r->threshold;
    else if (r->active && !match) r->counter++;
    else r->counter = 0;
    break;
  }
  default: /* INC_GT */
    if (r->need_new_target) {
      uint64_t base = count == 1 ? cur : record_back(1)[v];
      r->target = base + r->value; /* mod 2^64 */
      r->need_new_target = 0;
    }
    match = cur >= r->target;
    if (match) r->need_new_target = 1;
    if (r->active != match) r->counter++;
    else r->counter = 0;
  }
  if (r->counter >= r->threshold) {
    r->active = !r->active;
    r->counter = 0;
    return 1;
  }
  return 0;
}

/* The reference's order of work for the record at the head. */
static void commit(void) {
  samples++;
  if (active_rules > 0) log_row(record_back(0));
  for (int i = 0; i < rule_count; i++) {
    rule_t *r = &rules[i];
    if (!evaluate(r)) continue;
    transitions++;
    transition_hash = fnv(fnv(fnv(transition_hash, (uint32_t)samples),
                              (uint32_t)i),
                          (uint32_t)r->active);
    if (r->active) {
      if (++active_rules == 1) {
        put_bytes(column_names, column_names_len);
        for (uint64_t back = count; back-- > 0;) log_row(record_back(back));
      }
      log_marker("<<Event start>> Time: ", r);
    } else {
      active_rules--;
      log_marker("<<Event end>> Time: ", r);
    }
    /* EventsLog hands its chunk to the disk at every marker. */
    write_chunk();
  }
}

/* ---- generator -------------------------------------------------------- */

static void build_table(void) {
  table = malloc((size_t)table_records * (size_t)width * sizeof *table);
  if (table == NULL) die("out of memory");
  uint32_t x = seed;
  for (uint32_t i = 0; i < table_records; i++) {
    for (int k = 0; k < width; k++) {
      /* xorshift32 (Marsaglia 2003), the same three shifts as engine.ts. */
      x ^= x << 13;
      x ^= x >> 17;
      x ^= x << 5;
      table[i * (uint32_t)width + (uint32_t)k] =
          columns[k].base + (x & columns[k].mask);
    }
  }
}

static void feed(uint64_t n) {
  for (uint64_t s = 0; s < n; s++) {
    /* claim */
    head = head + 1 == capacity ? 0 : head + 1;
    if (count < capacity) count++;
    uint64_t *record = ring + head * (uint64_t)width;
    const uint32_t *draw = table + table_row * (uint32_t)width;
    for (int k = 0; k < counters; k++) record[k] = totals[k] += draw[k];
    for (int k = counters; k < width; k++) record[k] = draw[k];
    commit();
    table_row = (table_row + 1) & (table_records - 1);
  }
}

/* ---- repetitions ------------------------------------------------------ */

typedef struct {
  double loop_s, close_s;
  uint64_t transitions;
  uint32_t transition_hash, ring_hash;
  uint32_t active_mask;
  uint64_t log_bytes;
} rep_t;

static rep_t run_rep(const char *path, uint64_t timed) {
  rep_t out;
  log_file = fopen(path, "ab");
  if (log_file == NULL) die("cannot open events log");
  /* The chunk is the buffer: stdio's own would only add a copy. */
  setvbuf(log_file, NULL, _IONBF, 0);
  chunk_pos = 0;
  log_bytes = 0;
  head = capacity - 1; /* the first claim lands on record 0, as in Deno */
  count = 0;
  memset(ring, 0, capacity * (uint64_t)width * sizeof *ring);
  for (int i = 0; i < rule_count; i++) {
    rules[i].active = 0;
    rules[i].counter = 0;
    rules[i].need_new_target = 1;
    rules[i].target = 0;
  }
  active_rules = 0;
  samples = 0;
  transitions = 0;
  transition_hash = FNV_OFFSET;
  for (int k = 0; k < counters; k++) totals[k] = columns[k].start;
  table_row = 0;

  feed(prefill_samples);
  double start = now_s();
  feed(timed);
  double loop_end = now_s();
  write_chunk();
  if (fsync(fileno(log_file)) != 0) die("cannot sync events log");
  if (fclose(log_file) != 0) die("cannot close events log");
  double close_end = now_s();

  out.loop_s = loop_end - start;
  out.close_s = close_end - loop_end;
  out.transitions = transitions;
  out.transition_hash = transition_hash;
  out.active_mask = 0;
  for (int i = 0; i < rule_count; i++) {
    if (rules[i].active) out.active_mask |= 1u << i;
  }
  uint32_t h = FNV_OFFSET;
  for (uint64_t i = 0; i < capacity * (uint64_t)width; i++) {
    h = fnv(fnv(h, (uint32_t)ring[i]), (uint32_t)(ring[i] >> 32));
  }
  out.ring_hash = h;
  out.log_bytes = log_bytes;
  return out;
}

static void print_checksum(const rep_t *r) {
  printf("\"checksum\":{\"transitions\":%" PRIu64
         ",\"transitionHash\":\"%08" PRIx32 "\",\"activeMask\":%" PRIu32
         ",\"ringHash\":\"%08" PRIx32 "\",\"logBodyBytes\":%" PRIu64 "}",
         r->transitions, r->transition_hash, r->active_mask, r->ring_hash,
         r->log_bytes);
}

static int same_checksum(const rep_t *a, const rep_t *b) {
  return a->transitions == b->transitions &&
         a->transition_hash == b->transition_hash &&
         a->active_mask == b->active_mask && a->ring_hash == b->ring_hash &&
         a->log_bytes == b->log_bytes;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(const double *values, int n) {
  double sorted[MAX_REPS];
  memcpy(sorted, values, (size_t)n * sizeof *values);
  qsort(sorted, (size_t)n, sizeof *sorted, cmp_double);
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

/* ---- spec ------------------------------------------------------------- */

/* Copies the rest of a spec line (after `skip` fields) as a name. */
static void rest_of_line(char *dst, const char *line, int skip) {
  const char *p = line;
  for (int i = 0; i < skip; i++) {
    p = strchr(p, ' ');
    if (p == NULL) die("malformed spec line");
    p++;
  }
  size_t n = strcspn(p, "\n");
  if (n >= NAME_BYTES) die("name too long");
  memcpy(dst, p, n);
  dst[n] = '\0';
}

static void read_spec(void) {
  char line[1024];
  int got_end = 0;
  while (fgets(line, sizeof line, stdin) != NULL) {
    char word[32];
    if (sscanf(line, "%31s", word) != 1) continue;
    if (strcmp(word, "case") == 0) {
      rest_of_line(case_name, line, 1);
    } else if (strcmp(word, "depth") == 0) {
      if (sscanf(line, "depth %" SCNu64, &depth) != 1) die("bad depth");
    } else if (strcmp(word, "samples") == 0) {
      if (sscanf(line, "samples %" SCNu64 " %" SCNu64 " %" SCNu64 " %d",
                 &warmup_samples, &prefill_samples, &timed_samples,
                 &reps) != 4) {
        die("bad samples line");
      }
    } else if (strcmp(word, "generator") == 0) {
      if (sscanf(line, "generator %" SCNu32 " %" SCNu32, &seed,
                 &table_records) != 2) {
        die("bad generator line");
      }
    } else if (strcmp(word, "keep") == 0) {
      if (sscanf(line, "keep %d", &keep_log) != 1) die("bad keep line");
    } else if (strcmp(word, "column") == 0) {
      if (width == MAX_COLUMNS) die("too many columns");
      column_t *c = &columns[width++];
      if (sscanf(line, "column %d %" SCNu64 " %" SCNu32 " %" SCNu32, &c->kind,
                 &c->start, &c->base, &c->mask) != 4) {
        die("bad column line");
      }
      rest_of_line(c->name, line, 5);
    } else if (strcmp(word, "rule") == 0) {
      if (rule_count == MAX_RULES) die("too many rules");
      rule_t *r = &rules[rule_count++];
      char name[NAME_BYTES];
      if (sscanf(line, "rule %d %d %" SCNu64, &r->kind, &r->column,
                 &r->value) != 3) {
        die("bad rule line");
      }
      rest_of_line(name, line, 4);
      /* Quoted as events/header.ts quoteName does: embedded quotes doubled. */
      size_t n = 0;
      r->marker_name[n++] = '"';
      for (const char *p = name; *p; p++) {
        if (*p == '"') r->marker_name[n++] = '"';
        r->marker_name[n++] = *p;
      }
      r->marker_name[n++] = '"';
      r->marker_name[n++] = '\n';
      r->marker_name_len = n;
    } else if (strcmp(word, "end") == 0) {
      got_end = 1;
      break;
    }
  }
  if (!got_end) die("spec ends early");
  if (depth < 1 || width < 2 || reps < 1 || reps > MAX_REPS) {
    die("bad spec");
  }
  if (table_records == 0 || (table_records & (table_records - 1)) != 0) {
    die("table size must be a power of two");
  }
  for (counters = 0; counters < width && columns[counters].kind == COUNTER;) {
    counters++;
  }
  for (int k = counters; k < width; k++) {
    if (columns[k].kind == COUNTER) die("counters must come first");
  }
  for (int i = 0; i < rule_count; i++) {
    rule_t *r = &rules[i];
    if (r->kind < GT || r->kind > INC_GT || r->column < 0 ||
        r->column + 1 >= width) {
      die("bad rule");
    }
    r->threshold = r->kind == INC_GT ? 1 : depth;
  }
  /* Plain names only (no CSV quoting needed): mix.ts uses identifiers. */
  column_names_len = 0;
  for (int k = 0; k < width; k++) {
    size_t n = strlen(columns[k].name);
    if (k > 0) {
      memcpy(column_names + column_names_len, ", ", 2);
      column_names_len += 2;
    }
    memcpy(column_names + column_names_len, columns[k].name, n);
    column_names_len += n;
  }
  column_names[column_names_len++] = '\n';
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: deno run bench/mix.ts CASE | %s DIR\n", argv[0]);
    return 2;
  }
  const char *dir = argv[1];
  read_spec();
  capacity = 2 * depth;
  ring = malloc(capacity * (uint64_t)width * sizeof *ring);
  chunk = malloc(CHUNK_BYTES);
  if (ring == NULL || chunk == NULL) die("out of memory");
  build_table();

  char path[4096];
  if (warmup_samples > 0) {
    snprintf(path, sizeof path, "%s/c-%s-warmup.log", dir, case_name);
    run_rep(path, warmup_samples);
    remove(path);
  }
  rep_t results[MAX_REPS];
  double rates[MAX_REPS], closes[MAX_REPS], with_close[MAX_REPS];
  for (int rep = 1; rep <= reps; rep++) {
    snprintf(path, sizeof path, "%s/c-%s-%d.log", dir, case_name, rep);
    rep_t r = run_rep(path, timed_samples);
    if (!keep_log) remove(path);
    results[rep - 1] = r;
    rates[rep - 1] = (double)timed_samples / r.loop_s;
    closes[rep - 1] = r.close_s;
    with_close[rep - 1] = (double)timed_samples / (r.loop_s + r.close_s);
    printf("{\"engine\":\"c\",\"case\":\"%s\",\"rep\":%d,\"samples\":%" PRIu64
           ",\"loop_s\":%.9f,\"samples_per_s\":%.1f,\"close_s\":%.9f,"
           "\"samples_per_s_with_close\":%.1f,",
           case_name, rep, timed_samples, r.loop_s, rates[rep - 1], r.close_s,
           with_close[rep - 1]);
    print_checksum(&r);
    printf("}\n");
    fflush(stdout);
    if (!same_checksum(&r, &results[0])) {
      errno = 0;
      die("checksums differ between repetitions");
    }
  }
  double lo = rates[0], hi = rates[0];
  for (int i = 1; i < reps; i++) {
    if (rates[i] < lo) lo = rates[i];
    if (rates[i] > hi) hi = rates[i];
  }
  double med = median(rates, reps);
  printf("{\"engine\":\"c\",\"case\":\"%s\",\"summary\":true,\"reps\":%d,"
         "\"samples\":%" PRIu64 ",\"median_samples_per_s\":%.1f,"
         "\"min_samples_per_s\":%.1f,\"max_samples_per_s\":%.1f,"
         "\"median_close_s\":%.9f,\"median_samples_per_s_with_close\":%.1f,",
         case_name, reps, timed_samples, med, lo, hi, median(closes, reps),
         median(with_close, reps));
  print_checksum(&results[0]);
  if (keep_log) {
    snprintf(path, sizeof path, "%s/c-%s-1.log", dir, case_name);
    printf(",\"log_path\":\"%s\"", path);
  } else {
    printf(",\"log_path\":null");
  }
  printf(",\"log_header_bytes\":0}\n");
  fprintf(stderr,
          "c %s: %.2f M/s (median of %d x %" PRIu64
          " samples; min %.2f M/s, max %.2f M/s; close %.3f s)\n",
          case_name, med / 1e6, reps, timed_samples, lo / 1e6, hi / 1e6,
          median(closes, reps));
  return 0;
}
