/*
 * The C floor for the DOCA path (issue 32, item 5): what polling a DOCA
 * Telemetry Diag context costs with nothing but the calls, the decoding
 * and the sleep, the reference bench/doca_compare.ts measures the agent's
 * DOCA source against. It runs against the simulated libdoca
 * (tests/fixtures/libdoca_sim), which computes every value inside
 * query_counters, so both sides pay the same simulator cost.
 *
 * It makes the calls the agent makes (collectors/doca_session.ts,
 * collectors/doca.ts), in the same order, through dlopen as the agent's
 * FFI does:
 *
 * - devinfo_create_list; for each devinfo the PCIe address, ibdev and
 *   iface names; is_equal_pci_addr; dev_open of the match;
 *   devinfo_destroy_list;
 * - cap_is_supported, cap_get_max_num_data_ids,
 *   cap_get_log_max_num_samples, cap_is_sample_mode_supported(REPETITIVE),
 *   cap_is_data_timestamp_source_supported(RTC);
 * - create; set output format FORMAT_1, sample period, log max samples
 *   (from the depth as the agent does: max(depth, 100 ms of samples),
 *   rounded up to a power of two, capped), max data IDs, NO_SYNC,
 *   REPETITIVE, no data clear, RTC; apply_config; check_data_id of each
 *   ID; apply_counters_list_by_id; get_sample_period; start;
 *   get_sample_size (checked to be FORMAT_1's 16 + 8 * IDs);
 * - each poll, one query_counters into a buffer the size of the device
 *   ring, asking for up to the ring's samples; each sample decoded as the
 *   agent decodes it (sample_id gap count, latest timestamp rebuilt from
 *   earliest_h / latest_l as ns since the epoch, every u64 value read and
 *   summed into a checksum so nothing is optimised away);
 * - the wait between polls adapts by the agent's rule (collectors/doca.ts):
 *   it starts at a quarter of the ring's time, halves (not below 1 ms) when
 *   a poll found the ring more than half full, grows by 1.25 (not above
 *   half the ring's time) when it found less than an eighth. The next poll
 *   is due one wait after the last one began, slept to with
 *   clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME);
 * - at the end stop, destroy, dev_close.
 *
 * It stops after DURATION_S seconds, or at SIGTERM/SIGINT, and prints one
 * JSON line on stdout: samples, polls, SKIPPED polls, samples lost (gaps
 * in sample_id), the wait it ended at, its own CPU (getrusage RUSAGE_SELF,
 * user + system) and the checksum (a string: a u64).
 *
 *   cc -O2 -o bench/out/doca_floor bench/doca_floor.c -ldl
 *   bench/out/doca_floor LIB_DIR DEVICE PERIOD_NS DEPTH DURATION_S DATA_ID...
 *
 * bench/doca_compare.ts compiles it with `cc -O2` into bench/out/ and runs
 * it with the simulator's directory (tests/fixtures/libdoca_sim/build.ts).
 */

#define _GNU_SOURCE

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* The DOCA ABI as docs/spec/doca-nvml-abi.md gives it (ffi/doca.ts). */
#define DOCA_SUCCESS 0
#define DOCA_ERROR_AGAIN 5
#define DOCA_ERROR_TIME_OUT 9
#define DOCA_ERROR_SKIPPED 30
#define SYNC_NO_SYNC 0
#define SAMPLE_REPETITIVE 1
#define TS_RTC 1
#define FORMAT_1 1
#define FORMAT_1_HEADER_BYTES 16
#define PCI_ADDR_SIZE 13
#define IBDEV_NAME_SIZE 64
#define IFACE_NAME_SIZE 256
#define MAX_IDS 64
#define MIN_POLL_NS 1000000LL /* collectors/doca.ts MIN_POLL_MS */
#define RING_MIN_NS 100000000LL /* collectors/doca.ts RING_MIN_MS */

typedef int (*fn_create_list)(void ***, uint32_t *);
typedef int (*fn_destroy_list)(void **);
typedef int (*fn_pci_str)(void *, char *);
typedef int (*fn_is_equal_pci)(void *, const char *, uint8_t *);
typedef int (*fn_name)(void *, char *, uint32_t);
typedef int (*fn_dev_open)(void *, void **);
typedef int (*fn_ptr)(void *);
typedef void *(*fn_as_devinfo)(void *);
typedef int (*fn_cap_u32)(void *, uint32_t *);
typedef int (*fn_cap_u8)(void *, uint8_t *);
typedef int (*fn_cap_mode)(void *, int, uint8_t *);
typedef int (*fn_create)(void *, uint8_t, void **);
typedef int (*fn_set_int)(void *, int);
typedef int (*fn_set_u64)(void *, uint64_t);
typedef int (*fn_set_u8)(void *, uint8_t);
typedef int (*fn_set_u32)(void *, uint32_t);
typedef int (*fn_get_u64)(void *, uint64_t *);
typedef int (*fn_get_u32)(void *, uint32_t *);
typedef int (*fn_check_id)(void *, uint64_t);
typedef int (*fn_apply_ids)(void *, const uint64_t *, uint32_t, uint64_t *);
typedef int (*fn_query)(void *, void *, uint32_t, uint32_t *);

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void fail(const char *what, int rc) {
  fprintf(stderr, "doca_floor: %s: DOCA error %d\n", what, rc);
  exit(1);
}

static void check(int rc, const char *what) {
  if (rc != DOCA_SUCCESS) fail(what, rc);
}

static void *sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (p == NULL) {
    fprintf(stderr, "doca_floor: %s: %s\n", name, dlerror());
    exit(1);
  }
  return p;
}

static void *open_lib(const char *dir, const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (lib == NULL) {
    fprintf(stderr, "doca_floor: %s\n", dlerror());
    exit(1);
  }
  return lib;
}

int main(int argc, char **argv) {
  if (argc < 7) {
    fprintf(stderr, "usage: doca_floor LIB_DIR DEVICE PERIOD_NS DEPTH "
                    "DURATION_S DATA_ID...\n");
    return 2;
  }
  const char *lib_dir = argv[1];
  const char *device = argv[2];
  const uint64_t period = strtoull(argv[3], NULL, 10);
  const uint64_t depth = strtoull(argv[4], NULL, 10);
  const double duration_s = strtod(argv[5], NULL);
  const uint32_t nids = (uint32_t)(argc - 6);
  if (period == 0 || depth == 0 || !(duration_s > 0) || nids > MAX_IDS) {
    fprintf(stderr, "doca_floor: bad arguments\n");
    return 2;
  }
  uint64_t ids[MAX_IDS];
  for (uint32_t i = 0; i < nids; i++) ids[i] = strtoull(argv[6 + i], NULL, 0);

  void *common = open_lib(lib_dir, "libdoca_common.so.3");
  void *tel = open_lib(lib_dir, "libdoca_telemetry.so.3");

  /* The device, found and opened as openDevice() does (by PCIe address). */
  void **list;
  uint32_t ndev;
  check(((fn_create_list)sym(common, "doca_devinfo_create_list"))(&list, &ndev),
        "devinfo_create_list");
  fn_pci_str pci_str = (fn_pci_str)sym(common, "doca_devinfo_get_pci_addr_str");
  fn_name ibdev_name = (fn_name)sym(common, "doca_devinfo_get_ibdev_name");
  fn_name iface_name = (fn_name)sym(common, "doca_devinfo_get_iface_name");
  fn_is_equal_pci is_equal =
      (fn_is_equal_pci)sym(common, "doca_devinfo_is_equal_pci_addr");
  void *dev = NULL;
  for (uint32_t i = 0; i < ndev && dev == NULL; i++) {
    char pci[PCI_ADDR_SIZE], ibdev[IBDEV_NAME_SIZE], iface[IFACE_NAME_SIZE];
    pci_str(list[i], pci);
    ibdev_name(list[i], ibdev, IBDEV_NAME_SIZE);
    iface_name(list[i], iface, IFACE_NAME_SIZE);
    uint8_t equal = 0;
    if (is_equal(list[i], device, &equal) == DOCA_SUCCESS && equal) {
      check(((fn_dev_open)sym(common, "doca_dev_open"))(list[i], &dev),
            "dev_open");
    }
  }
  check(((fn_destroy_list)sym(common, "doca_devinfo_destroy_list"))(list),
        "devinfo_destroy_list");
  if (dev == NULL) {
    fprintf(stderr, "doca_floor: no device matches %s\n", device);
    return 1;
  }

  /* Capabilities, as checkDiagCaps(). */
  void *devinfo = ((fn_as_devinfo)sym(common, "doca_dev_as_devinfo"))(dev);
  check(((fn_ptr)sym(tel, "doca_telemetry_diag_cap_is_supported"))(devinfo),
        "cap_is_supported");
  uint32_t max_ids;
  check(((fn_cap_u32)sym(tel, "doca_telemetry_diag_cap_get_max_num_data_ids"))(
            devinfo, &max_ids),
        "cap_get_max_num_data_ids");
  uint8_t log_max;
  check(((fn_cap_u8)sym(tel, "doca_telemetry_diag_cap_get_log_max_num_samples"))(
            devinfo, &log_max),
        "cap_get_log_max_num_samples");
  uint8_t flag = 0;
  check(((fn_cap_mode)sym(tel, "doca_telemetry_diag_cap_is_sample_mode_supported"))(
            devinfo, SAMPLE_REPETITIVE, &flag),
        "cap_is_sample_mode_supported");
  if (!flag) fail("no repetitive sampling", 0);
  check(((fn_cap_mode)sym(
            tel, "doca_telemetry_diag_cap_is_data_timestamp_source_supported"))(
            devinfo, TS_RTC, &flag),
        "cap_is_data_timestamp_source_supported");
  if (!flag) fail("no RTC timestamps", 0);
  if (nids > max_ids) fail("too many data IDs", 0);

  /* The ring: max(depth, 100 ms of samples), a power of two, capped. */
  uint64_t wanted = depth;
  if ((uint64_t)RING_MIN_NS / period > wanted) wanted = RING_MIN_NS / period;
  int log_samples = 1;
  while (log_samples < log_max && ((uint64_t)1 << log_samples) < wanted) {
    log_samples++;
  }

  /* Create and configure, as createDiag(). */
  void *diag;
  check(((fn_create)sym(tel, "doca_telemetry_diag_create"))(dev, 0, &diag),
        "create");
  check(((fn_set_int)sym(tel, "doca_telemetry_diag_set_output_format"))(
            diag, FORMAT_1),
        "set_output_format");
  check(((fn_set_u64)sym(tel, "doca_telemetry_diag_set_sample_period"))(diag,
                                                                         period),
        "set_sample_period");
  check(((fn_set_u8)sym(tel, "doca_telemetry_diag_set_log_max_num_samples"))(
            diag, (uint8_t)log_samples),
        "set_log_max_num_samples");
  check(((fn_set_u32)sym(tel, "doca_telemetry_diag_set_max_num_data_ids"))(
            diag, nids),
        "set_max_num_data_ids");
  check(((fn_set_int)sym(tel, "doca_telemetry_diag_set_sync_mode"))(
            diag, SYNC_NO_SYNC),
        "set_sync_mode");
  check(((fn_set_int)sym(tel, "doca_telemetry_diag_set_sample_mode"))(
            diag, SAMPLE_REPETITIVE),
        "set_sample_mode");
  check(((fn_set_u8)sym(tel, "doca_telemetry_diag_set_data_clear"))(diag, 0),
        "set_data_clear");
  check(((fn_set_int)sym(tel, "doca_telemetry_diag_set_data_timestamp_source"))(
            diag, TS_RTC),
        "set_data_timestamp_source");
  check(((fn_ptr)sym(tel, "doca_telemetry_diag_apply_config"))(diag),
        "apply_config");

  /* The IDs: checked one by one, then applied, as the collector does. */
  fn_check_id check_id =
      (fn_check_id)dlsym(tel, "doca_telemetry_diag_check_data_id");
  for (uint32_t i = 0; check_id != NULL && i < nids; i++) {
    check(check_id(diag, ids[i]), "check_data_id");
  }
  uint64_t failed = 0;
  check(((fn_apply_ids)sym(tel, "doca_telemetry_diag_apply_counters_list_by_id"))(
            diag, ids, nids, &failed),
        "apply_counters_list_by_id");
  uint64_t device_period;
  check(((fn_get_u64)sym(tel, "doca_telemetry_diag_get_sample_period"))(
            diag, &device_period),
        "get_sample_period");
  check(((fn_ptr)sym(tel, "doca_telemetry_diag_start"))(diag), "start");
  uint32_t sample_bytes;
  check(((fn_get_u32)sym(tel, "doca_telemetry_diag_get_sample_size"))(
            diag, &sample_bytes),
        "get_sample_size");
  if (sample_bytes != FORMAT_1_HEADER_BYTES + 8 * nids) {
    fail("unexpected sample size", (int)sample_bytes);
  }
  fn_query query = (fn_query)sym(tel, "doca_telemetry_diag_query_counters");

  const uint32_t ring = 1u << log_samples;
  const uint32_t stride = sample_bytes / 4;
  uint32_t *buf = calloc(ring, sample_bytes);
  if (buf == NULL) fail("calloc", 0);
  const int64_t ring_ns = (int64_t)ring * (int64_t)device_period;
  const int64_t max_wait = ring_ns / 2 > MIN_POLL_NS ? ring_ns / 2 : MIN_POLL_NS;
  double wait = ring_ns / 4 > MIN_POLL_NS ? (double)(ring_ns / 4)
                                          : (double)MIN_POLL_NS;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal; /* no SA_RESTART: the sleep returns EINTR */
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);

  uint64_t checksum = 0, samples = 0, polls = 0, skipped = 0, lost = 0;
  uint64_t transient = 0;
  int64_t last_id = -1;
  const int64_t end = now_ns() + (int64_t)(duration_s * 1e9);

  while (!stop) {
    const int64_t began = now_ns();
    uint32_t n = 0;
    polls++;
    const int rc = query(diag, buf, ring, &n);
    if (rc == DOCA_ERROR_AGAIN || rc == DOCA_ERROR_TIME_OUT) {
      transient++;
      n = 0;
    } else if (rc == DOCA_ERROR_SKIPPED) {
      skipped++;
    } else if (rc != DOCA_SUCCESS) {
      fail("query_counters", rc);
    }
    for (uint32_t i = 0; i < n; i++) {
      const uint32_t *s = buf + (size_t)i * stride;
      const uint32_t id = s[0];
      if (last_id >= 0) lost += (uint32_t)(id - (uint32_t)last_id - 1);
      last_id = id;
      /* FORMAT_1: sample_id, earliest_h, earliest_l, latest_l, values. */
      const uint32_t earliest_h = s[1], earliest_l = s[2], latest_l = s[3];
      const uint32_t latest_h = earliest_h + (latest_l < earliest_l ? 1 : 0);
      checksum += (uint64_t)latest_h * 1000000000u + latest_l;
      const uint64_t *values = (const uint64_t *)(s + 4);
      for (uint32_t k = 0; k < nids; k++) checksum += values[k];
    }
    samples += n;
    if (n > ring / 2) {
      wait = wait / 2 > MIN_POLL_NS ? wait / 2 : MIN_POLL_NS;
    } else if (n < ring / 8) {
      wait = wait * 1.25 < (double)max_wait ? wait * 1.25 : (double)max_wait;
    }
    const int64_t due = began + (int64_t)wait;
    if (due >= end) break;
    struct timespec t = {due / 1000000000, due % 1000000000};
    int sleep_rc;
    while ((sleep_rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t,
                                       NULL)) == EINTR &&
           !stop) {
    }
    if (sleep_rc != 0 && sleep_rc != EINTR) fail("clock_nanosleep", sleep_rc);
  }

  check(((fn_ptr)sym(tel, "doca_telemetry_diag_stop"))(diag), "stop");
  check(((fn_ptr)sym(tel, "doca_telemetry_diag_destroy"))(diag), "destroy");
  check(((fn_ptr)sym(common, "doca_dev_close"))(dev), "dev_close");

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  const double cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  printf("{\"period_ns\":%" PRIu64 ",\"data_ids\":%u,\"ring_samples\":%u,"
         "\"samples\":%" PRIu64 ",\"polls\":%" PRIu64 ",\"skipped_polls\":%" PRIu64
         ",\"lost_samples\":%" PRIu64 ",\"transient_errors\":%" PRIu64
         ",\"wait_ms\":%.2f,\"cpu_s\":%.6f,\"checksum\":\"%" PRIu64 "\"}\n",
         device_period, nids, ring, samples, polls, skipped, lost, transient,
         wait / 1e6, cpu_s, checksum);
  return 0;
}
