/*
 * crc32.c - CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), the
 * checksum zlib and gzip use, so `python3 -c 'import zlib'` can check a
 * profile by hand.  Shared by runtime and tool; no dependencies: the table
 * is computed on first use (a race only computes the same table twice).
 */
#include <stddef.h>
#include <stdint.h>

#include "format/format.h"

static uint32_t crc_table[256];
static volatile int crc_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
	__atomic_store_n(&crc_ready, 1, __ATOMIC_RELEASE);
}

uint32_t cp_crc32(uint32_t crc, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	if (!__atomic_load_n(&crc_ready, __ATOMIC_ACQUIRE))
		crc_init();
	crc = ~crc;
	while (len--)
		crc = crc_table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return ~crc;
}
