/* knobs.c - the knob table, its lookups and its names. A value's parsing is knob_value.c's,
 * the restarts a change needs knob_restart.c's. Pure.
 *
 * Parameter names were checked against the daemons installed here: Samba 4.17 with
 * `testparm -sv` (defaults included), NFS-Ganesha 4.3 with ganesha-core-config(8) and
 * ganesha-export-config(8) (MaxRead/MaxWrite are EXPORT options, not NFS_CORE_PARAM ones),
 * netatalk 4.2 with afp.conf(5), and the kernel's sysctl defaults of Debian 12. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "knobs.h"
#include "units.h"

#define L(...) ((const char *const[]){ __VA_ARGS__, NULL })

static const struct knob table[KNOB_COUNT] = {
	[KNOB_SMB_SERVER_SIGNING] =
		{
			.id = KNOB_SMB_SERVER_SIGNING,
			.name = "smb.server_signing",
			.proto = PROTO_SMB,
			.param = "server signing",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_ENUM,
			.words = L("default", "disabled", "if_required", "desired", "required"),
			.candidates =
				L("default", "disabled", "if_required", "desired", "required"),
			.dflt = "default",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_BULK | WL_MIXED_RW | WL_SMALL_IO | WL_RANDOM_IO,
			.why = "signing hashes every SMB packet: CPU per byte on fast links; never "
			       "below a configured \"desired\"/\"required\"",
		},
	[KNOB_SMB_SMB_ENCRYPT] =
		{
			.id = KNOB_SMB_SMB_ENCRYPT,
			.name = "smb.smb_encrypt",
			.proto = PROTO_SMB,
			.param = "server smb encrypt",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_ENUM,
			.words = L("default", "off", "if_required", "desired", "required"),
			.candidates = L("default", "off", "if_required", "desired", "required"),
			.dflt = "default",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_BULK | WL_MIXED_RW | WL_SMALL_IO | WL_RANDOM_IO,
			.why = "AES on every byte: often the ceiling of SMB3 throughput on small "
			       "CPUs; "
			       "never below a configured \"desired\"/\"required\"",
		},
	[KNOB_SMB_MULTICHANNEL] =
		{
			.id = KNOB_SMB_MULTICHANNEL,
			.name = "smb.multichannel",
			.proto = PROTO_SMB,
			.param = "server multi channel support",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_ENUM,
			.words = L("yes", "no"),
			.candidates = L("yes", "no"),
			.dflt = "yes",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_BULK | WL_MIXED_RW,
			.why = "several TCP connections per session: spreads bulk transfers over "
			       "cores "
			       "and NICs",
		},
	[KNOB_SMB_USE_SENDFILE] =
		{
			.id = KNOB_SMB_USE_SENDFILE,
			.name = "smb.use_sendfile",
			.proto = PROTO_SMB,
			.param = "use sendfile",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_ENUM,
			.words = L("no", "yes"),
			.candidates = L("no", "yes"),
			.dflt = "no",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_READ | WL_COPY_IN_SHARE | WL_VIDEO_FRAMES,
			.why = "reads go from the page cache to the socket without a copy through "
			       "smbd",
		},
	[KNOB_SMB_AIO_READ_SIZE] =
		{
			.id = KNOB_SMB_AIO_READ_SIZE,
			.name = "smb.aio_read_size",
			.proto = PROTO_SMB,
			.param = "aio read size",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_SIZE,
			.min = 0,
			.max = 16u << 20,
			.candidates = L("1", "0", "64K", "1M"),
			.dflt = "1",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_READ | WL_COPY_IN_SHARE | WL_MIXED_RW | WL_RANDOM_IO |
				     WL_VIDEO_FRAMES,
			.why = "reads at least this large run in smbd's thread pool (0: never), so "
			       "one "
			       "client can keep several reads in flight",
		},
	[KNOB_SMB_AIO_WRITE_SIZE] =
		{
			.id = KNOB_SMB_AIO_WRITE_SIZE,
			.name = "smb.aio_write_size",
			.proto = PROTO_SMB,
			.param = "aio write size",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_SIZE,
			.min = 0,
			.max = 16u << 20,
			.candidates = L("1", "0", "64K", "1M"),
			.dflt = "1",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_WRITE | WL_COPY_IN_SHARE | WL_MIXED_RW | WL_RANDOM_IO |
				     WL_VIDEO_FRAMES,
			.why = "writes at least this large run in smbd's thread pool (0: never)",
		},
	[KNOB_SMB_MIN_RECEIVEFILE_SIZE] =
		{
			.id = KNOB_SMB_MIN_RECEIVEFILE_SIZE,
			.name = "smb.min_receivefile_size",
			.proto = PROTO_SMB,
			.param = "min receivefile size",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_SIZE,
			.min = 0,
			.max = 16u << 20,
			.candidates = L("0", "16K", "128K", "1M"),
			.dflt = "0",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_WRITE | WL_COPY_IN_SHARE,
			.why = "writes at least this large are spliced from the socket to the file "
			       "without a copy (0: off)",
		},
	[KNOB_SMB_SOCKET_OPTIONS] =
		{
			.id = KNOB_SMB_SOCKET_OPTIONS,
			.name = "smb.socket_options",
			.proto = PROTO_SMB,
			.param = "socket options",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_SOCKOPTS,
			.min = 4096,
			.max = 64u << 20,
			.candidates = L("TCP_NODELAY", "TCP_NODELAY IPTOS_THROUGHPUT",
					"TCP_NODELAY SO_RCVBUF=262144 SO_SNDBUF=262144",
					"TCP_NODELAY SO_RCVBUF=1048576 SO_SNDBUF=1048576"),
			.dflt = "TCP_NODELAY",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_BULK | WL_MIXED_RW | WL_SMALL_IO,
			.why = "fixed SO_RCVBUF/SO_SNDBUF switch off Linux's TCP autotuning: they "
			       "can "
			       "help a long fat link or cripple it",
		},
	[KNOB_SMB_STRICT_SYNC] =
		{
			.id = KNOB_SMB_STRICT_SYNC,
			.name = "smb.strict_sync",
			.proto = PROTO_SMB,
			.param = "strict sync",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_ENUM,
			.words = L("yes", "no"),
			.candidates = L("yes", "no"),
			.dflt = "yes",
			.effect = KNOB_RELOAD,
			.safety = KNOB_UNSAFE,
			.unsafe = L("no"),
			.workloads = WL_SEQ_WRITE | WL_COPY_IN_SHARE | WL_SMALL_FILES |
				     WL_MIXED_RW | WL_METADATA,
			.why = "\"no\" ignores clients' flush requests: faster writes, but "
			       "acknowledged "
			       "data can be lost on power loss",
		},
	[KNOB_SMB_IO_URING] =
		{
			.id = KNOB_SMB_IO_URING,
			.name = "smb.io_uring",
			.proto = PROTO_SMB,
			.param = "vfs objects",
			.place = KNOB_AT_SMB_VFS,
			.where = "smb.conf vfs objects, last",
			.kind = KNOB_ENUM,
			.words = L("no", "yes"),
			.candidates = L("no", "yes"),
			.dflt = "no",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_BULK | WL_MIXED_RW | WL_SMALL_IO | WL_RANDOM_IO,
			.why = "reads, writes and fsyncs through the kernel's io_uring instead of "
			       "smbd's thread pool: less overhead per request; needs io_uring in "
			       "the kernel and Samba's io_uring.so",
		},
	[KNOB_NFS_EXPORT_SYNC] =
		{
			.id = KNOB_NFS_EXPORT_SYNC,
			.name = "nfs.export_sync",
			.proto = PROTO_NFS,
			.param = "sync/async",
			.place = KNOB_AT_EXPORTS,
			.where = "exports (every export)",
			.kind = KNOB_ENUM,
			.words = L("sync", "async"),
			.candidates = L("sync", "async"),
			.dflt = "sync",
			.effect = KNOB_RELOAD,
			.safety = KNOB_UNSAFE,
			.unsafe = L("async"),
			.workloads = WL_SEQ_WRITE | WL_COPY_IN_SHARE | WL_SMALL_FILES |
				     WL_MIXED_RW | WL_RANDOM_IO | WL_METADATA,
			.why = "\"async\" acknowledges writes before they reach the disk: much "
			       "faster, "
			       "and loses them on power loss",
		},
	[KNOB_NFS_THREADS] =
		{
			.id = KNOB_NFS_THREADS,
			.name = "nfs.threads",
			.proto = PROTO_NFS,
			.param = "RPC_Ioq_ThrdMax",
			.place = KNOB_AT_GANESHA_CORE,
			.where = "ganesha.conf NFS_CORE_PARAM",
			.kind = KNOB_INT,
			.min = 2,
			.max = 16384,
			.candidates = L("200", "16", "64", "512"),
			.dflt = "200",
			.effect = KNOB_RESTART,
			.safety = KNOB_SAFE,
			.workloads = WL_MIXED_RW | WL_SMALL_FILES | WL_SMALL_IO | WL_RANDOM_IO |
				     WL_METADATA,
			.why = "how many requests Ganesha serves at once; too few queue, too many "
			       "thrash",
		},
	[KNOB_NFS_GANESHA_MAX_READ] =
		{
			.id = KNOB_NFS_GANESHA_MAX_READ,
			.name = "nfs.ganesha_max_read",
			.proto = PROTO_NFS,
			.param = "MaxRead",
			.place = KNOB_AT_GANESHA_EXPORT,
			.where = "ganesha.conf EXPORT (every export)",
			.kind = KNOB_SIZE,
			.min = 512,
			.max = 64u << 20,
			.candidates = L("64M", "16M", "4M", "1M"),
			.dflt = "64M",
			.effect = KNOB_RESTART,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_READ | WL_COPY_IN_SHARE | WL_VIDEO_FRAMES,
			.why = "the largest READ a client may send: bounds rsize",
		},
	[KNOB_NFS_GANESHA_MAX_WRITE] =
		{
			.id = KNOB_NFS_GANESHA_MAX_WRITE,
			.name = "nfs.ganesha_max_write",
			.proto = PROTO_NFS,
			.param = "MaxWrite",
			.place = KNOB_AT_GANESHA_EXPORT,
			.where = "ganesha.conf EXPORT (every export)",
			.kind = KNOB_SIZE,
			.min = 512,
			.max = 64u << 20,
			.candidates = L("64M", "16M", "4M", "1M"),
			.dflt = "64M",
			.effect = KNOB_RESTART,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_WRITE | WL_COPY_IN_SHARE,
			.why = "the largest WRITE a client may send: bounds wsize",
		},
	[KNOB_NFS_VERSIONS] =
		{
			.id = KNOB_NFS_VERSIONS,
			.name = "nfs.versions",
			.proto = PROTO_NFS,
			.param = "Protocols",
			.place = KNOB_AT_GANESHA_CORE,
			.where = "ganesha.conf NFS_CORE_PARAM and EXPORT",
			.kind = KNOB_VERSIONS,
			.candidates = L("3,4", "3", "4"),
			.dflt = NULL,
			.effect = KNOB_RESTART,
			.safety = KNOB_SAFE,
			.workloads = WL_ALL,
			.why = "v3 is stateless and often faster for bulk I/O; v4 has one port and "
			       "delegations; only versions protocols.nfs.versions lists",
		},
	[KNOB_AFP_SERVER_QUANTUM] =
		{
			.id = KNOB_AFP_SERVER_QUANTUM,
			.name = "afp.server_quantum",
			.proto = PROTO_AFP,
			.param = "server quantum",
			.place = KNOB_AT_AFP_GLOBAL,
			.where = "afp.conf [Global]",
			.kind = KNOB_SIZE,
			.min = 32000,
			.max = 0xFFFFFFFFFull,
			.candidates = L("1M", "256K", "4M", "16M"),
			.dflt = "1M",
			.effect = KNOB_RESTART,
			.safety = KNOB_SAFE,
			.workloads = WL_BULK,
			.why = "the largest DSI request: bigger quanta mean fewer round trips per "
			       "MB",
		},
	[KNOB_AFP_DSIREADBUF] =
		{
			.id = KNOB_AFP_DSIREADBUF,
			.name = "afp.dsireadbuf",
			.proto = PROTO_AFP,
			.param = "dsireadbuf",
			.place = KNOB_AT_AFP_GLOBAL,
			.where = "afp.conf [Global]",
			.kind = KNOB_INT,
			.min = 1,
			.max = 128,
			.candidates = L("12", "4", "24", "48"),
			.dflt = "12",
			.effect = KNOB_RESTART,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_WRITE | WL_COPY_IN_SHARE | WL_VIDEO_FRAMES,
			.why = "read-ahead from the client's socket, in server quanta, per "
			       "connection "
			       "(memory per client)",
		},
	[KNOB_AFP_TCPRCVBUF] =
		{
			.id = KNOB_AFP_TCPRCVBUF,
			.name = "afp.tcprcvbuf",
			.proto = PROTO_AFP,
			.param = "tcprcvbuf",
			.place = KNOB_AT_AFP_GLOBAL,
			.where = "afp.conf [Global]",
			.kind = KNOB_SIZE,
			.min = 4096,
			.max = 64u << 20,
			.candidates = L("128K", "512K", "2M", "8M"),
			.dflt = NULL,
			.effect = KNOB_RESTART,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_WRITE | WL_COPY_IN_SHARE | WL_VIDEO_FRAMES,
			.why = "a fixed TCP receive buffer for afpd (unset: the kernel autotunes "
			       "it)",
		},
	[KNOB_AFP_TCPSNDBUF] =
		{
			.id = KNOB_AFP_TCPSNDBUF,
			.name = "afp.tcpsndbuf",
			.proto = PROTO_AFP,
			.param = "tcpsndbuf",
			.place = KNOB_AT_AFP_GLOBAL,
			.where = "afp.conf [Global]",
			.kind = KNOB_SIZE,
			.min = 4096,
			.max = 64u << 20,
			.candidates = L("128K", "512K", "2M", "8M"),
			.dflt = NULL,
			.effect = KNOB_RESTART,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_READ | WL_COPY_IN_SHARE | WL_VIDEO_FRAMES,
			.why = "a fixed TCP send buffer for afpd (unset: the kernel autotunes it)",
		},
	[KNOB_SYS_RMEM_MAX] =
		{
			.id = KNOB_SYS_RMEM_MAX,
			.name = "sys.rmem_max",
			.proto = 0,
			.param = "net.core.rmem_max",
			.place = KNOB_AT_SYSCTL,
			.where = "/etc/sysctl.d/90-nastune.conf",
			.kind = KNOB_SIZE,
			.min = 4096,
			.max = 1u << 30,
			.candidates = L("208K", "4M", "16M", "64M"),
			.dflt = "208K",
			.effect = KNOB_LIVE,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_WRITE | WL_COPY_IN_SHARE | WL_VIDEO_FRAMES,
			.why = "caps SO_RCVBUF: socket options and tcprcvbuf above it are silently "
			       "clipped",
		},
	[KNOB_SYS_WMEM_MAX] =
		{
			.id = KNOB_SYS_WMEM_MAX,
			.name = "sys.wmem_max",
			.proto = 0,
			.param = "net.core.wmem_max",
			.place = KNOB_AT_SYSCTL,
			.where = "/etc/sysctl.d/90-nastune.conf",
			.kind = KNOB_SIZE,
			.min = 4096,
			.max = 1u << 30,
			.candidates = L("208K", "4M", "16M", "64M"),
			.dflt = "208K",
			.effect = KNOB_LIVE,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_READ | WL_COPY_IN_SHARE | WL_VIDEO_FRAMES,
			.why = "caps SO_SNDBUF: socket options and tcpsndbuf above it are silently "
			       "clipped",
		},
	[KNOB_SYS_TCP_RMEM] =
		{
			.id = KNOB_SYS_TCP_RMEM,
			.name = "sys.tcp_rmem",
			.proto = 0,
			.param = "net.ipv4.tcp_rmem",
			.place = KNOB_AT_SYSCTL,
			.where = "/etc/sysctl.d/90-nastune.conf",
			.kind = KNOB_TRIPLE,
			.min = 1024,
			.max = 1u << 30,
			.candidates = L("4096 131072 6291456", "4096 131072 16777216",
					"4096 131072 33554432", "4096 131072 67108864"),
			.dflt = "4096 131072 6291456",
			.effect = KNOB_LIVE,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_WRITE | WL_COPY_IN_SHARE | WL_VIDEO_FRAMES,
			.why = "min, start and autotuning ceiling of every TCP receive window: the "
			       "ceiling bounds a single stream's rate",
		},
	[KNOB_SYS_TCP_WMEM] =
		{
			.id = KNOB_SYS_TCP_WMEM,
			.name = "sys.tcp_wmem",
			.proto = 0,
			.param = "net.ipv4.tcp_wmem",
			.place = KNOB_AT_SYSCTL,
			.where = "/etc/sysctl.d/90-nastune.conf",
			.kind = KNOB_TRIPLE,
			.min = 1024,
			.max = 1u << 30,
			.candidates = L("4096 16384 4194304", "4096 65536 16777216",
					"4096 65536 33554432", "4096 65536 67108864"),
			.dflt = "4096 16384 4194304",
			.effect = KNOB_LIVE,
			.safety = KNOB_SAFE,
			.workloads = WL_SEQ_READ | WL_COPY_IN_SHARE | WL_VIDEO_FRAMES,
			.why = "min, start and autotuning ceiling of every TCP send buffer",
		},
	[KNOB_NET_MTU] =
		{
			.id = KNOB_NET_MTU,
			.name = "net.mtu",
			.proto = 0,
			.param = "mtu",
			.place = KNOB_AT_NETLINK,
			.where = "netlink (network.mtu; not rendered)",
			.kind = KNOB_INT,
			.min = 576,
			.max = 9216,
			.candidates = L("1500", "9000"),
			.dflt = "1500",
			.effect = KNOB_LIVE,
			.safety = KNOB_SAFE,
			.workloads = WL_BULK | WL_MIXED_RW,
			.why = "jumbo frames cut per-packet cost; only MTUs every peer was proven "
			       "to "
			       "receive",
		},
	[KNOB_SMB_CASE_SENSITIVE] =
		{
			.id = KNOB_SMB_CASE_SENSITIVE,
			.name = "smb.case_sensitive",
			.proto = PROTO_SMB,
			.param = "case sensitive",
			.place = KNOB_AT_SMB_SHARE,
			.where = "smb.conf [share]",
			.kind = KNOB_ENUM,
			.words = L("auto", "yes", "no"),
			.candidates = L("auto", "yes"),
			.dflt = "auto",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SEMANTICS,
			.visible = L("yes"),
			.changes = "names become case-sensitive: \"Report.txt\" and \"report.txt\" "
				   "are two files, and a name typed in another case is not found",
			.workloads = WL_META,
			.why = "a case-insensitive lookup of a missing name reads the whole "
			       "directory: O(n) per miss in big directories; \"yes\" looks up "
			       "the exact name only",
		},
	[KNOB_SMB_NAME_CASE] =
		{
			.id = KNOB_SMB_NAME_CASE,
			.name = "smb.name_case",
			.proto = PROTO_SMB,
			.param = "default case",
			.place = KNOB_AT_SMB_SHARE,
			.where = "smb.conf [share]",
			.kind = KNOB_ENUM,
			.words = L("preserve", "lower", "upper"),
			.candidates = L("preserve", "lower"),
			.dflt = "preserve",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SEMANTICS,
			.visible = L("lower", "upper"),
			.changes = "new names are forced to one case (preserve case = no, short "
				   "preserve case = no): a file saved as \"Report.txt\" is "
				   "stored as \"report.txt\", and with case sensitive = yes a name "
				   "on disk in another case can no longer be opened",
			.workloads = WL_META,
			.why = "with case sensitive = yes, names all in one case are found "
			       "whatever case a client types: Samba's large-directory recipe "
			       "sets default case, preserve case and short preserve case together",
		},
	[KNOB_SMB_STORE_DOS_ATTRIBUTES] =
		{
			.id = KNOB_SMB_STORE_DOS_ATTRIBUTES,
			.name = "smb.store_dos_attributes",
			.proto = PROTO_SMB,
			.param = "store dos attributes",
			.place = KNOB_AT_SMB_SHARE,
			.where = "smb.conf [share]",
			.kind = KNOB_ENUM,
			.words = L("yes", "no"),
			.candidates = L("yes", "no"),
			.dflt = "yes",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SEMANTICS,
			.visible = L("no"),
			.changes = "DOS attributes (hidden, system, archive) and creation times "
				   "set by clients are no longer kept in user.DOSATTRIB: they "
				   "come from the mode bits or are lost",
			.workloads = WL_META,
			.why = "an extended-attribute read per file listed and a write per file "
			       "created",
		},
	[KNOB_SMB_EA_SUPPORT] =
		{
			.id = KNOB_SMB_EA_SUPPORT,
			.name = "smb.ea_support",
			.proto = PROTO_SMB,
			.param = "ea support",
			.place = KNOB_AT_SMB_SHARE,
			.where = "smb.conf [share]",
			.kind = KNOB_ENUM,
			.words = L("yes", "no"),
			.candidates = L("yes", "no"),
			.dflt = "yes",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SEMANTICS,
			.visible = L("no"),
			.changes = "clients can no longer read or write extended attributes on "
				   "the share",
			.keep = KNOB_KEEP_FRUIT,
			.workloads = WL_META,
			.why = "extended-attribute queries cost an xattr call per file; shares "
				"served to Macs keep them (vfs_fruit)",
		},
	[KNOB_SMB_FRUIT_METADATA] =
		{
			.id = KNOB_SMB_FRUIT_METADATA,
			.name = "smb.fruit_metadata",
			.proto = PROTO_SMB,
			.param = "fruit:metadata",
			.place = KNOB_AT_SMB_SHARE,
			.where = "smb.conf [share] (vfs_fruit)",
			.kind = KNOB_ENUM,
			.words = L("stream", "netatalk"),
			.candidates = L("stream", "netatalk"),
			.dflt = "stream",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SEMANTICS,
			.visible = L("netatalk"),
			.changes = "Finder metadata (tags, labels, comments) moves to netatalk's "
				   "xattr: what Macs stored as streams before is no longer seen",
			.keep = KNOB_KEEP_TM,
			.workloads = WL_META,
			.why = "where vfs_fruit keeps the AFP_AfpInfo stream: passed down to "
			       "streams_xattr, or netatalk's own xattr; Time Machine shares "
			       "keep \"stream\"",
		},
	[KNOB_SMB_AAPL_MAX_ACCESS] =
		{
			.id = KNOB_SMB_AAPL_MAX_ACCESS,
			.name = "smb.aapl_max_access",
			.proto = PROTO_SMB,
			.param = "readdir_attr:aapl_max_access",
			.place = KNOB_AT_SMB_SHARE,
			.where = "smb.conf [share] (vfs_fruit)",
			.kind = KNOB_ENUM,
			.words = L("yes", "no"),
			.candidates = L("yes", "no"),
			.dflt = "yes",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SEMANTICS,
			.visible = L("no"),
			.changes = "Finder listings show every item as fully accessible: a "
				   "denied open fails only when tried",
			.workloads = WL_META,
			.why = "each entry of a Mac's listing carries the user's effective "
			       "permissions, an ACL evaluation per entry",
		},
	[KNOB_SMB_AAPL_FINDER_INFO] =
		{
			.id = KNOB_SMB_AAPL_FINDER_INFO,
			.name = "smb.aapl_finder_info",
			.proto = PROTO_SMB,
			.param = "readdir_attr:aapl_finder_info",
			.place = KNOB_AT_SMB_SHARE,
			.where = "smb.conf [share] (vfs_fruit)",
			.kind = KNOB_ENUM,
			.words = L("yes", "no"),
			.candidates = L("yes", "no"),
			.dflt = "yes",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SEMANTICS,
			.visible = L("no"),
			.changes = "Finder listings carry no FinderInfo: colour labels and "
				   "custom icons show only once an item is opened",
			.workloads = WL_META,
			.why = "each entry of a Mac's listing carries its FinderInfo, a "
			       "metadata stream read per entry",
		},
	[KNOB_SMB_AAPL_RSIZE] =
		{
			.id = KNOB_SMB_AAPL_RSIZE,
			.name = "smb.aapl_rsize",
			.proto = PROTO_SMB,
			.param = "readdir_attr:aapl_rsize",
			.place = KNOB_AT_SMB_SHARE,
			.where = "smb.conf [share] (vfs_fruit)",
			.kind = KNOB_ENUM,
			.words = L("yes", "no"),
			.candidates = L("yes", "no"),
			.dflt = "yes",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SEMANTICS,
			.visible = L("no"),
			.changes = "Finder listings report no resource fork sizes: sizes shown "
				   "for items with resource forks are too small",
			.workloads = WL_META,
			.why = "each entry of a Mac's listing carries its resource fork size, a "
			       "stream lookup per entry",
		},
	[KNOB_SMB_STRICT_LOCKING] =
		{
			.id = KNOB_SMB_STRICT_LOCKING,
			.name = "smb.strict_locking",
			.proto = PROTO_SMB,
			.param = "strict locking",
			.place = KNOB_AT_SMB_SHARE,
			.where = "smb.conf [share]",
			.kind = KNOB_ENUM,
			.words = L("auto", "yes", "no"),
			.candidates = L("auto", "no", "yes"),
			.dflt = "auto",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SEMANTICS,
			.visible = L("no"),
			.changes = "byte-range locks are no longer checked on reads and writes: "
				   "a client can read or write a range another client has locked",
			.workloads = WL_META | WL_SMALL_IO | WL_RANDOM_IO,
			.why = "a lock check on every read and write of a file without an "
			       "oplock (auto), of every file (yes) or of none (no)",
		},
	[KNOB_SMB_OPLOCKS] =
		{
			.id = KNOB_SMB_OPLOCKS,
			.name = "smb.oplocks",
			.proto = PROTO_SMB,
			.param = "oplocks",
			.place = KNOB_AT_SMB_SHARE,
			.where = "smb.conf [share]",
			.kind = KNOB_ENUM,
			.words = L("yes", "no"),
			.candidates = L("yes", "no"),
			.dflt = "yes",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_META | WL_SMALL_IO,
			.why = "oplocks let a client cache a file it alone opens; without them "
			       "every read and write goes to the server, and no break is ever "
			       "waited for",
		},
	[KNOB_SMB_LEASES] =
		{
			.id = KNOB_SMB_LEASES,
			.name = "smb.leases",
			.proto = PROTO_SMB,
			.param = "smb2 leases",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_ENUM,
			.words = L("yes", "no"),
			.candidates = L("yes", "no"),
			.dflt = "yes",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_META | WL_SMALL_IO,
			.why = "SMB2 leases let a client cache handles, reads and directory "
			       "contents across opens; each costs a break when another opens",
		},
	[KNOB_SMB_STAT_CACHE] =
		{
			.id = KNOB_SMB_STAT_CACHE,
			.name = "smb.stat_cache",
			.proto = PROTO_SMB,
			.param = "stat cache",
			.place = KNOB_AT_SMB_GLOBAL,
			.where = "smb.conf [global]",
			.kind = KNOB_ENUM,
			.words = L("yes", "no"),
			.candidates = L("yes", "no"),
			.dflt = "yes",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SAFE,
			.workloads = WL_META,
			.why = "smbd remembers how a case-insensitive name maps to the name on "
			       "disk, so a repeated lookup skips the directory scan",
		},
	[KNOB_NFS_ENTRIES_HWMARK] =
		{
			.id = KNOB_NFS_ENTRIES_HWMARK,
			.name = "nfs.entries_hwmark",
			.proto = PROTO_NFS,
			.param = "Entries_HWMark",
			.place = KNOB_AT_GANESHA_MDCACHE,
			.where = "ganesha.conf MDCACHE",
			.kind = KNOB_INT,
			.min = 1000,
			.max = 100000000,
			.candidates = L("100000", "25000", "500000"),
			.dflt = "100000",
			.effect = KNOB_RESTART,
			.safety = KNOB_SAFE,
			.workloads = WL_META,
			.why = "how many objects Ganesha's metadata cache holds before it reuses "
			       "entries: a tree larger than it is looked up from disk again",
		},
	[KNOB_NFS_DIR_CHUNK] =
		{
			.id = KNOB_NFS_DIR_CHUNK,
			.name = "nfs.dir_chunk",
			.proto = PROTO_NFS,
			.param = "Dir_Chunk",
			.place = KNOB_AT_GANESHA_MDCACHE,
			.where = "ganesha.conf MDCACHE",
			.kind = KNOB_INT,
			.min = 16,
			.max = 65536,
			.candidates = L("128", "32", "1024"),
			.dflt = "128",
			.effect = KNOB_RESTART,
			.safety = KNOB_SAFE,
			.workloads = WL_META,
			.why = "directory entries Ganesha caches per chunk: a big directory's "
			       "listing is read and cached in chunks this large",
		},
	[KNOB_NFS_ATTR_EXPIRATION] =
		{
			.id = KNOB_NFS_ATTR_EXPIRATION,
			.name = "nfs.attr_expiration",
			.proto = PROTO_NFS,
			.param = "Attr_Expiration_Time",
			.place = KNOB_AT_GANESHA_EXPORT,
			.where = "ganesha.conf EXPORT",
			.kind = KNOB_INT,
			.min = 0,
			.max = 86400,
			.candidates = L("60", "0", "600"),
			.dflt = "60",
			.effect = KNOB_RELOAD,
			.safety = KNOB_SEMANTICS,
			.visible = L("600"),
			.changes = "NFS clients may see sizes and times up to 10 minutes stale for "
				   "files changed over SMB, AFP or on the server itself",
			.workloads = WL_META,
			.why = "seconds Ganesha trusts cached attributes before asking the file "
			       "system again (0: every time)",
		},
	[KNOB_AFP_CNID_SCHEME] =
		{
			.id = KNOB_AFP_CNID_SCHEME,
			.name = "afp.cnid_scheme",
			.proto = PROTO_AFP,
			.param = "cnid scheme",
			.place = KNOB_AT_AFP_VOLUME,
			.where = "afp.conf [volume]",
			.kind = KNOB_ENUM,
			.words = L("dbd", "last", "sqlite", "mysql"),
			.candidates = L("dbd"),
			.dflt = "dbd",
			.effect = KNOB_RESTART,
			.safety = KNOB_SEMANTICS,
			.changes = "the volume's file ids start again: Mac aliases and the "
				   "Finder's recent items to it break (\"last\": read-only)",
			.workloads = WL_META,
			.why = "every AFP lookup maps a file id through the CNID database; over "
			       "protocols.afp.cnid_scheme (dbd: cnid_dbd, BerkeleyDB)",
		},
	[KNOB_AFP_VOL_DBPATH] =
		{
			.id = KNOB_AFP_VOL_DBPATH,
			.name = "afp.vol_dbpath",
			.proto = PROTO_AFP,
			.param = "vol dbpath",
			.place = KNOB_AT_AFP_VOLUME,
			.where = "afp.conf [volume]",
			.kind = KNOB_PATH,
			.candidates = L("/var/lib/netatalk/CNID"),
			.dflt = "/var/lib/netatalk/CNID",
			.effect = KNOB_RESTART,
			.safety = KNOB_SEMANTICS,
			.changes = "the volume's CNID database starts empty at the new place: file "
				   "ids change, so Mac aliases to it break",
			.workloads = WL_META,
			.why = "where the CNID database lives: on a fast disk (an SSD) rather "
			       "than the volume's, lookups stop waiting for the spindles",
		},
	[KNOB_AFP_EA] =
		{
			.id = KNOB_AFP_EA,
			.name = "afp.ea",
			.proto = PROTO_AFP,
			.param = "ea",
			.place = KNOB_AT_AFP_VOLUME,
			.where = "afp.conf [volume]",
			.kind = KNOB_ENUM,
			.words = L("sys", "samba", "ad", "none"),
			.candidates = L("sys", "ad"),
			.dflt = NULL,
			.effect = KNOB_RESTART,
			.safety = KNOB_SEMANTICS,
			.visible = L("samba", "ad", "none"),
			.changes = "extended attributes and resource forks are stored elsewhere "
				   "(.AppleDouble files, or none kept): what Macs stored before is "
				   "no longer seen",
			.workloads = WL_META,
			.why = "where afpd keeps extended attributes and resource forks: the "
			       "file system's xattrs (sys) or .AppleDouble files (ad)",
		},
};

const struct knob *
knob_get(enum knob_id id)
{
	return (unsigned)id < KNOB_COUNT ? &table[id] : NULL;
}

const struct knob *
knob_find(const char *name)
{
	size_t i;

	for (i = 0; name && i < KNOB_COUNT; i++)
		if (strcmp(table[i].name, name) == 0)
			return &table[i];
	return NULL;
}

const struct knob *
knob_first(void)
{
	return &table[0];
}

const struct knob *
knob_next(const struct knob *k)
{
	return k && k + 1 < table + KNOB_COUNT ? k + 1 : NULL;
}

const char *
knob_key(const struct knob *k)
{
	return strchr(k->name, '.') + 1;
}

const char *
knob_place_file(enum knob_place p)
{
	switch (p) {
	case KNOB_AT_SMB_GLOBAL:
	case KNOB_AT_SMB_VFS:
	case KNOB_AT_SMB_SHARE:
		return "/etc/samba/smb.conf";
	case KNOB_AT_EXPORTS:
		return "/etc/exports.d/nastune.exports";
	case KNOB_AT_GANESHA_CORE:
	case KNOB_AT_GANESHA_EXPORT:
	case KNOB_AT_GANESHA_MDCACHE:
		return "/etc/ganesha/ganesha.conf";
	case KNOB_AT_AFP_GLOBAL:
	case KNOB_AT_AFP_VOLUME:
		return "/etc/netatalk/afp.conf";
	case KNOB_AT_SYSCTL:
		return "/etc/sysctl.d/90-nastune.conf";
	case KNOB_AT_NETLINK:
		break;
	}
	return NULL;
}

const char *
knob_effect_name(enum knob_effect e)
{
	return e == KNOB_RELOAD ? "reload" : e == KNOB_RESTART ? "restart" : "live";
}

const char *
knob_safety_name(enum knob_safety s)
{
	return s == KNOB_UNSAFE ? "unsafe" : s == KNOB_SEMANTICS ? "semantics" : "safe";
}

const char *
knob_src_name(enum knob_src s)
{
	return s == KNOB_CONFIG ? "config" : s == KNOB_TUNED ? "tuned" : "unset";
}

const char *
knob_workload_name(unsigned bit)
{
	static const char *const names[WL_COUNT] = {
		"seq-write", "seq-read", "copy-in-share", "mixed-rw", "small-files", "small-io",
		"random-io", "metadata", "video-frames",  "big-dir",  "source-tree",
	};
	unsigned i;

	for (i = 0; i < WL_COUNT; i++)
		if (bit == 1u << i)
			return names[i];
	return NULL;
}
