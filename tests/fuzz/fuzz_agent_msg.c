/* fuzz_agent_msg.c - libFuzzer harness: any bytes as an agent message body, and as a framed
 * stream through agent_recv on a pipe. */
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

#include "agent_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char err[256];
	json_t *msg = NULL;
	int p[2];

	if (agent_parse(data, size, &msg, err, sizeof(err)) == 0) {
		(void)agent_type(msg);
		json_decref(msg);
	}
	/* The same bytes as a stream: length prefix and body as they come. */
	if (size <= 65536 && pipe(p) == 0) {
		if (write(p[1], data, size) == (ssize_t)size) {
			close(p[1]);
			while (agent_recv(p[0], 50, &msg, err, sizeof(err)) == 0)
				json_decref(msg);
		} else {
			close(p[1]);
		}
		close(p[0]);
	}
	return 0;
}
