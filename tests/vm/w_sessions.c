// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions that come and go while the module does (t_instr_cycles):
 *
 *   w_sessions PID     until SIGTERM: open /dev/memmon, watch PID with its
 *                      children, enable, map the rings and read them for a
 *                      few ms, unmap and close; then a pause, and again.
 *                      Then print "sessions N records R absent A failed F".
 *
 * When the module is not loaded (or going), open() fails: that is counted
 * as absent, not as a failure; a failure is any step that fails once the
 * session is open (an open session holds the module).
 * Each session is held a few ms out of every ~25, so that the cycle's
 * rmmod finds the module unused after a retry or two.
 */
#include <signal.h>
#include <time.h>

#include "mmtest.h"

static volatile sig_atomic_t done;

static void on_term(int sig)
{
	(void)sig;
	done = 1;
}

static void count_rec(const struct memmon_rec_header *rec, unsigned int cpu, void *arg)
{
	(void)rec;
	(void)cpu;
	++*(unsigned long *)arg;
}

int main(int argc, char **argv)
{
	unsigned long sessions = 0, records = 0, absent = 0, failed = 0;
	struct sigaction sa = { .sa_handler = on_term };
	uint32_t pid;

	if (argc != 2)
		return 2;
	pid = (uint32_t)atoi(argv[1]);
	sigaction(SIGTERM, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (!done) {
		struct mm_map m;
		int fd = open(MEMMON_DEVICE_PATH, O_RDWR | O_CLOEXEC);
		int ncpus;

		if (fd < 0) {
			absent++;
			usleep(20000);
			continue;
		}
		sessions++;
		if (mm_configure(fd, 16384, 0) ||
		    mm_watch(fd, MEMMON_IOC_WATCH_ADD, pid, MEMMON_WATCH_FOLLOW_CHILDREN) ||
		    ioctl(fd, MEMMON_IOC_ENABLE) || mm_get_info(fd, &m.info)) {
			failed++;
			close(fd);
			continue;
		}
		m.cons = mmap(NULL, m.info.consumer_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		m.prod = mmap(NULL, m.info.producer_size, PROT_READ, MAP_SHARED, fd,
			      (off_t)m.info.producer_offset);
		close(fd);	/* the mappings hold the session */
		if (m.cons == MAP_FAILED || m.prod == MAP_FAILED) {
			failed++;
			if (m.cons != MAP_FAILED)
				munmap(m.cons, m.info.consumer_size);
			if (m.prod != MAP_FAILED)
				munmap(m.prod, m.info.producer_size);
			continue;
		}
		ncpus = (int)m.info.nr_cpus;
		for (int i = 0; i < 3; i++) {
			for (int cpu = 0; cpu < ncpus; cpu++)
				if (mm_drain_cpu(&m, (unsigned int)cpu, count_rec, &records) < 0)
					failed++;
			usleep(1000);
		}
		mm_unmap(&m);
		usleep(20000);
	}
	printf("sessions %lu records %lu absent %lu failed %lu\n", sessions, records, absent,
	       failed);
	return 0;
}
