/* SPDX-License-Identifier: MIT */
#pragma once

/* The few fields of Perfetto's protos that a clock-sync reader and writer need: their numbers and
 * wire types, written once for both directions. A trace is a concatenation of Trace.packet
 * entries; nothing else in it matters to clocks. Numbers are from Perfetto's
 * trace_packet.proto, clock_snapshot.proto and remote_clock_sync.proto. */

enum {
        PF_WIRE_VARINT = 0,
        PF_WIRE_FIXED64 = 1,
        PF_WIRE_LEN = 2,
        PF_WIRE_FIXED32 = 5,
};

/* Trace */
#define PF_TRACE_PACKET 1u

/* TracePacket */
#define PF_PACKET_TIMESTAMP 8u
#define PF_PACKET_CLOCK_SNAPSHOT 6u
#define PF_PACKET_TRUSTED_SEQUENCE_ID 10u
#define PF_PACKET_SEQUENCE_FLAGS 13u
#define PF_PACKET_INCREMENTAL_STATE_CLEARED 41u
#define PF_PACKET_COMPRESSED 50u
#define PF_PACKET_TIMESTAMP_CLOCK_ID 58u
#define PF_PACKET_DEFAULTS 59u
#define PF_PACKET_MACHINE_ID 98u
#define PF_PACKET_REMOTE_CLOCK_SYNC 107u
#define PF_PACKET_ZSTD_COMPRESSED 133u

/* TracePacket.sequence_flags */
#define PF_SEQ_INCREMENTAL_STATE_CLEARED 1u
#define PF_SEQ_NEEDS_INCREMENTAL_STATE 2u

/* TracePacketDefaults */
#define PF_DEFAULTS_TIMESTAMP_CLOCK_ID 58u

/* ClockSnapshot and ClockSnapshot.Clock */
#define PF_SNAPSHOT_CLOCKS 1u
#define PF_SNAPSHOT_PRIMARY_TRACE_CLOCK 2u
#define PF_CLOCK_ID 1u
#define PF_CLOCK_TIMESTAMP 2u
#define PF_CLOCK_IS_INCREMENTAL 3u
#define PF_CLOCK_UNIT_MULTIPLIER_NS 4u

/* RemoteClockSync and RemoteClockSync.SyncedClocks */
#define PF_REMOTE_SYNCED_CLOCKS 1u
#define PF_SYNCED_CLIENT_CLOCKS 2u
#define PF_SYNCED_HOST_CLOCKS 3u

/* Clock ids: the builtin ones, the sequence-scoped range, and where global ids begin. */
#define PF_CLOCK_REALTIME 1u
#define PF_CLOCK_REALTIME_COARSE 2u
#define PF_CLOCK_MONOTONIC 3u
#define PF_CLOCK_MONOTONIC_COARSE 4u
#define PF_CLOCK_MONOTONIC_RAW 5u
#define PF_CLOCK_BOOTTIME 6u
#define PF_CLOCK_SEQUENCE_SCOPED_FIRST 64u
#define PF_CLOCK_SEQUENCE_SCOPED_LAST 127u
#define PF_CLOCK_GLOBAL_FIRST 128u
