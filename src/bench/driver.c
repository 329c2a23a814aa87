/* driver.c - the registry of benchmark drivers, looked up by exact name or URL scheme. */
#include <stddef.h>
#include <string.h>

#include "bench_driver.h"

/* Registry order is the order `bench` runs protocols in when none are named. */
static const struct bench_driver *const drivers[] = {
	&bench_drv_null, &bench_drv_posix, &bench_drv_smb, &bench_drv_nfs, &bench_drv_afp, NULL,
};

const struct bench_driver *const *
bench_drivers(void)
{
	return drivers;
}

const struct bench_driver *
bench_driver_find(const char *name)
{
	size_t i;

	for (i = 0; drivers[i]; i++)
		if (strcmp(drivers[i]->name, name) == 0)
			return drivers[i];
	return NULL;
}

const struct bench_driver *
bench_driver_for_scheme(const char *scheme)
{
	size_t i;

	for (i = 0; drivers[i]; i++)
		if (strcmp(drivers[i]->scheme, scheme) == 0)
			return drivers[i];
	return NULL;
}
