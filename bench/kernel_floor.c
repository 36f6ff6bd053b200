/*
 * The C floor for bench/sampler.ts (issue 32, item 5): what sampling one
 * interface's kernel counters costs with nothing but the reads and the
 * sleep, the reference the agent's kernel source is measured against.
 *
 * It does what one sample of the kernel source does (collectors/kernel/
 * collector.ts, sysfs_counters.ts, ffi/ethtool.ts), in plain C:
 *
 * - at start, opens every file in /sys/class/net/IF/statistics/ once, and
 *   sizes the ethtool statistics once (ETHTOOL_GSSET_INFO, or
 *   ETHTOOL_GDRVINFO's n_stats where the driver has no GSSET_INFO);
 * - each period, one pread at offset 0 of each file, its decimal value
 *   parsed; one ETHTOOL_GSTATS ioctl; a CLOCK_REALTIME stamp; then
 *   clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME) to the next absolute
 *   deadline. Deadlines already passed when it goes to sleep are skipped
 *   and counted as late (no sample is taken for them).
 *
 * It stops after DURATION_S seconds, or at SIGTERM/SIGINT, and prints one
 * JSON line on stdout: samples, late (deadlines skipped), its own CPU
 * (getrusage RUSAGE_SELF, user + system), the p50/p99/max interval between
 * consecutive samples' CLOCK_REALTIME stamps, and a checksum of the values
 * read (so that nothing is optimised away).
 *
 *   cc -O2 -o bench/out/kernel_floor bench/kernel_floor.c
 *   bench/out/kernel_floor IF PERIOD_NS DURATION_S
 *
 * bench/sampler.ts compiles it with `cc -O2` into bench/out/ and runs it
 * inside the veth namespace it makes.
 */

#define _GNU_SOURCE

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_FILES 128
#define READ_BYTES 32

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

static int64_t ns_of(const struct timespec *t) {
  return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

static struct timespec ts_of(int64_t ns) {
  struct timespec t = {ns / 1000000000, ns % 1000000000};
  return t;
}

static int compare_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

static void die(const char *what) {
  fprintf(stderr, "kernel_floor: %s: %s\n", what, strerror(errno));
  exit(1);
}

/* How many ETHTOOL_GSTATS entries the driver has (0 if none). */
static uint32_t ethtool_count(int sock, struct ifreq *ifr) {
  struct {
    struct ethtool_sset_info info;
    uint32_t data[1];
  } sset;
  memset(&sset, 0, sizeof sset);
  sset.info.cmd = ETHTOOL_GSSET_INFO;
  sset.info.sset_mask = 1ULL << ETH_SS_STATS;
  ifr->ifr_data = (void *)&sset;
  if (ioctl(sock, SIOCETHTOOL, ifr) == 0) {
    return (sset.info.sset_mask & (1ULL << ETH_SS_STATS)) ? sset.data[0] : 0;
  }
  struct ethtool_drvinfo drv;
  memset(&drv, 0, sizeof drv);
  drv.cmd = ETHTOOL_GDRVINFO;
  ifr->ifr_data = (void *)&drv;
  if (ioctl(sock, SIOCETHTOOL, ifr) != 0) die("ETHTOOL_GDRVINFO");
  return drv.n_stats;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: kernel_floor IF PERIOD_NS DURATION_S\n");
    return 2;
  }
  const char *iface = argv[1];
  const int64_t period = strtoll(argv[2], NULL, 10);
  const double duration_s = strtod(argv[3], NULL);
  if (strlen(iface) >= IFNAMSIZ || period <= 0 || !(duration_s > 0)) {
    fprintf(stderr, "kernel_floor: bad arguments\n");
    return 2;
  }

  /* Every file of the interface's statistics folder, opened once. */
  char dir_path[256];
  snprintf(dir_path, sizeof dir_path, "/sys/class/net/%s/statistics", iface);
  DIR *dir = opendir(dir_path);
  if (dir == NULL) die(dir_path);
  int fds[MAX_FILES];
  int nfiles = 0;
  struct dirent *entry;
  while ((entry = readdir(dir)) != NULL && nfiles < MAX_FILES) {
    if (entry->d_name[0] == '.') continue;
    int fd = openat(dirfd(dir), entry->d_name, O_RDONLY | O_CLOEXEC);
    if (fd < 0) die(entry->d_name);
    fds[nfiles++] = fd;
  }
  closedir(dir);

  /* The ethtool statistics: sized once, one buffer. */
  int sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (sock < 0) die("socket");
  struct ifreq ifr;
  memset(&ifr, 0, sizeof ifr);
  strncpy(ifr.ifr_name, iface, IFNAMSIZ - 1);
  const uint32_t nstats = ethtool_count(sock, &ifr);
  struct ethtool_stats *stats =
      calloc(1, sizeof *stats + (size_t)(nstats + 1) * sizeof(uint64_t));
  if (stats == NULL) die("calloc");

  /* Room for every interval the run can have. */
  const int64_t duration_ns = (int64_t)(duration_s * 1e9);
  const size_t cap = (size_t)(duration_ns / period) + 16;
  int64_t *intervals = malloc(cap * sizeof *intervals);
  if (intervals == NULL) die("malloc");

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal; /* no SA_RESTART: the sleep returns EINTR */
  sigaction(SIGTERM, &sa, NULL);
  sigaction(SIGINT, &sa, NULL);

  char buf[READ_BYTES];
  uint64_t checksum = 0, samples = 0, late = 0, malformed = 0;
  size_t n_intervals = 0;
  int64_t last_stamp = -1;
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  const int64_t start = ns_of(&t);
  const int64_t end = start + duration_ns;
  int64_t deadline = start;

  while (!stop) {
    /* One sample: every netdev file, one GSTATS, a stamp. */
    for (int k = 0; k < nfiles; k++) {
      ssize_t n = pread(fds[k], buf, READ_BYTES, 0);
      if (n <= 0 || n >= READ_BYTES) {
        malformed++;
        continue;
      }
      uint64_t v = 0;
      ssize_t i = 0;
      for (; i < n && buf[i] >= '0' && buf[i] <= '9'; i++) {
        v = v * 10 + (uint64_t)(buf[i] - '0');
      }
      if (i == 0 || (i < n && buf[i] != '\n')) malformed++;
      checksum += v;
    }
    if (nstats > 0) {
      stats->cmd = ETHTOOL_GSTATS;
      stats->n_stats = nstats;
      ifr.ifr_data = (void *)stats;
      if (ioctl(sock, SIOCETHTOOL, &ifr) != 0) die("ETHTOOL_GSTATS");
      for (uint32_t i = 0; i < nstats; i++) checksum += stats->data[i];
    }
    clock_gettime(CLOCK_REALTIME, &t);
    const int64_t stamp = ns_of(&t);
    if (last_stamp >= 0 && n_intervals < cap) {
      intervals[n_intervals++] = stamp - last_stamp;
    }
    last_stamp = stamp;
    samples++;

    /* The next deadline not yet passed; the ones skipped are late. */
    deadline += period;
    clock_gettime(CLOCK_MONOTONIC, &t);
    const int64_t now = ns_of(&t);
    if (now > deadline) {
      const int64_t skipped = (now - deadline) / period + 1;
      late += (uint64_t)skipped;
      deadline += skipped * period;
    }
    if (deadline >= end) break;
    struct timespec due = ts_of(deadline);
    int rc;
    while ((rc = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &due,
                                 NULL)) == EINTR &&
           !stop) {
    }
    if (rc != 0 && rc != EINTR) {
      errno = rc;
      die("clock_nanosleep");
    }
  }

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  const double cpu_s = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
                       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  qsort(intervals, n_intervals, sizeof *intervals, compare_i64);
  const double to_ms = 1e-6;
  double p50 = 0, p99 = 0, max = 0;
  if (n_intervals > 0) {
    p50 = (double)intervals[(n_intervals - 1) / 2] * to_ms;
    p99 = (double)intervals[(size_t)((double)(n_intervals - 1) * 0.99)] * to_ms;
    max = (double)intervals[n_intervals - 1] * to_ms;
  }
  printf("{\"interface\":\"%s\",\"period_ns\":%" PRId64 ",\"netdev_files\":%d,"
         "\"ethtool_stats\":%u,\"samples\":%" PRIu64 ",\"late\":%" PRIu64
         ",\"malformed\":%" PRIu64 ",\"cpu_s\":%.6f,\"interval_p50_ms\":%.4f,"
         "\"interval_p99_ms\":%.4f,\"interval_max_ms\":%.4f,"
         "\"checksum\":%" PRIu64 "}\n",
         iface, period, nfiles, nstats, samples, late, malformed, cpu_s, p50,
         p99, max, checksum);
  return 0;
}
