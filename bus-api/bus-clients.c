/* SPDX-License-Identifier: MIT */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bus-clients.h"
#include "cleanup.h"
#include "time-util.h"

#define BUCKETS 1024

struct BusClients {
        sd_bus *bus;
        sd_bus_slot *owner_changed;     /* one match for every client's departure */
        void (*gone)(BusClient *client, void *userdata);
        void *userdata;
        BusBucket reply_bytes;          /* all clients' large replies together */
        size_t n;
        BusClient *buckets[BUCKETS];
};

static size_t bucket_of(const char *name) {
        uint32_t h = 2166136261u;       /* FNV-1a */

        for (; *name; name++)
                h = (h ^ (unsigned char) *name) * 16777619u;
        return h % BUCKETS;
}

static BusClient *client_free(BusClient *cl) {
        if (!cl)
                return NULL;
        sd_bus_slot_unref(cl->owner_query);
        free(cl->name);
        free(cl);
        return NULL;
}

static void client_unlink(BusClients *c, BusClient *cl) {
        for (BusClient **p = &c->buckets[bucket_of(cl->name)]; *p; p = &(*p)->next_in_bucket)
                if (*p == cl) {
                        *p = cl->next_in_bucket;
                        c->n--;
                        return;
                }
}

static BusClient *client_find(BusClients *c, const char *name) {
        for (BusClient *i = c->buckets[bucket_of(name)]; i; i = i->next_in_bucket)
                if (strcmp(i->name, name) == 0)
                        return i;
        return NULL;
}

static void client_gone(BusClients *c, BusClient *cl) {
        client_unlink(c, cl);
        if (c->gone)
                c->gone(cl, c->userdata);
        client_free(cl);
}

/* One match for all clients rather than an sd_bus_track each: every track adds a match rule,
 * and sd-bus keeps the memory of its match tree. Only the bus driver is believed: a client
 * can send us a unicast NameOwnerChanged, and sd-bus matches the rule's sender
 * 'org.freedesktop.DBus' against any unique name. */
static int on_name_owner_changed(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusClients *c = userdata;
        const char *sender = sd_bus_message_get_sender(m), *name, *old_owner, *new_owner;
        BusClient *cl;

        if (!sender || strcmp(sender, BUS_DRIVER_NAME) != 0)
                return 0;
        if (sd_bus_message_read(m, "sss", &name, &old_owner, &new_owner) < 0 || new_owner[0] != '\0')
                return 0;
        cl = client_find(c, name);
        if (cl)
                client_gone(c, cl);
        return 0;
}

/* A client may have left before its call was read, and then no NameOwnerChanged is to come:
 * the driver is asked once whether it is still there. */
static int on_owner_query(sd_bus_message *m, void *userdata, sd_bus_error *error) {
        BusClient *cl = userdata;

        cl->owner_query = sd_bus_slot_unref(cl->owner_query);
        if (sd_bus_message_is_method_error(m, "org.freedesktop.DBus.Error.NameHasNoOwner"))
                client_gone(cl->clients, cl);
        return 0;
}

int bus_clients_new(sd_bus *bus, void (*gone)(BusClient *client, void *userdata), void *userdata,
                    BusClients **ret) {
        BusClients *c;

        if (!bus || !ret)
                return -EINVAL;
        c = calloc(1, sizeof(*c));
        if (!c)
                return -ENOMEM;
        c->bus = sd_bus_ref(bus);
        c->gone = gone;
        c->userdata = userdata;
        c->reply_bytes = (BusBucket) { BUS_CLIENTS_REPLY_BURST_BYTES, clock_now_ns(CLOCK_MONOTONIC) };
        *ret = c;
        return 0;
}

BusClients *bus_clients_free(BusClients *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < BUCKETS; i++)
                while (c->buckets[i]) {
                        BusClient *cl = c->buckets[i];

                        c->buckets[i] = cl->next_in_bucket;
                        if (c->gone)
                                c->gone(cl, c->userdata);
                        client_free(cl);
                }
        sd_bus_slot_unref(c->owner_changed);
        sd_bus_unref(c->bus);
        free(c);
        return NULL;
}

static size_t clients_sweep(BusClients *c, int64_t now_ns);

int bus_clients_get(BusClients *c, const char *sender, BusClient **ret) {
        _cleanup_free_ BusClient *cl = NULL;
        int64_t now_ns = clock_now_ns(CLOCK_MONOTONIC);
        BusClient *known;
        size_t b;
        int r;

        if (!c || !sender || !ret)
                return -EINVAL;
        known = client_find(c, sender);
        if (known) {
                *ret = known;
                return 0;
        }
        if (c->n >= BUS_CLIENTS_MAX && clients_sweep(c, now_ns) == 0)
                return -EDQUOT;
        if (!c->owner_changed) {
                /* Asynchronous: a method handler must not wait for the bus driver. */
                r = sd_bus_match_signal_async(c->bus, &c->owner_changed, BUS_DRIVER_NAME, "/org/freedesktop/DBus",
                                              BUS_DRIVER_NAME, "NameOwnerChanged", on_name_owner_changed,
                                              NULL, c);
                if (r < 0)
                        return r;
        }

        cl = calloc(1, sizeof(*cl));
        if (!cl)
                return -ENOMEM;
        cl->clients = c;
        cl->name = strdup(sender);
        if (!cl->name)
                return -ENOMEM;
        cl->reply_bytes = (BusBucket) { BUS_CLIENT_REPLY_BURST_BYTES, now_ns };
        cl->replies = (BusBucket) { BUS_CLIENT_REPLIES_BURST_BYTES, now_ns };
        cl->tables = (BusBucket) { BUS_CLIENT_TABLES_BURST, now_ns };
        cl->values = (BusBucket) { BUS_CLIENT_VALUES_BURST, now_ns };
        r = sd_bus_call_method_async(c->bus, &cl->owner_query, BUS_DRIVER_NAME, "/org/freedesktop/DBus",
                                     BUS_DRIVER_NAME, "GetNameOwner", on_owner_query, cl, "s", sender);
        if (r < 0) {
                free(cl->name);
                return r;
        }
        b = bucket_of(sender);
        cl->next_in_bucket = c->buckets[b];
        c->buckets[b] = cl;
        c->n++;
        *ret = TAKE_PTR(cl);
        return 0;
}

size_t bus_clients_count(const BusClients *c) {
        return c ? c->n : 0;
}

static void bucket_refill(BusBucket *b, int64_t now_ns, uint64_t burst, uint64_t per_s) {
        uint64_t gap_ns, add;

        if (now_ns <= b->refilled_ns)
                return;
        gap_ns = (uint64_t) (now_ns - b->refilled_ns);
        /* gap * per_s fits in 64 bits for gaps below 100 s at our rates; beyond, the bucket is
         * full. Only the time that became whole tokens is counted in, so that a slow rate is
         * not lost to rounding between frequent calls. */
        if (gap_ns > UINT64_C(100) * NSEC_PER_SEC) {
                b->tokens = burst;
                b->refilled_ns = now_ns;
                return;
        }
        add = gap_ns * per_s / (uint64_t) NSEC_PER_SEC;
        if (add == 0)
                return;
        b->tokens = b->tokens + add > burst ? burst : b->tokens + add;
        b->refilled_ns = b->tokens == burst ? now_ns : b->refilled_ns + (int64_t) (add * (uint64_t) NSEC_PER_SEC / per_s);
}

uint64_t bus_bucket_peek(BusBucket *b, int64_t now_ns, uint64_t burst, uint64_t per_s) {
        bucket_refill(b, now_ns, burst, per_s);
        return b->tokens;
}

bool bus_bucket_take(BusBucket *b, uint64_t n, int64_t now_ns, uint64_t burst, uint64_t per_s) {
        if (bus_bucket_peek(b, now_ns, burst, per_s) < n)
                return false;
        b->tokens -= n;
        return true;
}

bool bus_client_may_reply_bytes(BusClient *cl, uint64_t bytes, int64_t now_ns) {
        return bus_bucket_peek(&cl->reply_bytes, now_ns, BUS_CLIENT_REPLY_BURST_BYTES, BUS_CLIENT_REPLY_BYTES_PER_S) >= bytes &&
               bus_bucket_peek(&cl->clients->reply_bytes, now_ns, BUS_CLIENTS_REPLY_BURST_BYTES,
                               BUS_CLIENTS_REPLY_BYTES_PER_S) >= bytes;
}

bool bus_client_take_reply_bytes(BusClient *cl, uint64_t bytes, int64_t now_ns) {
        if (!bus_client_may_reply_bytes(cl, bytes, now_ns))
                return false;
        cl->reply_bytes.tokens -= bytes;
        cl->clients->reply_bytes.tokens -= bytes;
        return true;
}

bool bus_client_take_values(BusClient *cl, uint64_t n, int64_t now_ns) {
        return bus_bucket_take(&cl->values, n, now_ns, BUS_CLIENT_VALUES_BURST, BUS_CLIENT_VALUES_PER_S);
}

bool bus_client_take_replies(BusClient *cl, uint64_t bytes, int64_t now_ns) {
        return bus_bucket_take(&cl->replies, bytes, now_ns, BUS_CLIENT_REPLIES_BURST_BYTES,
                               BUS_CLIENT_REPLIES_BYTES_PER_S);
}

bool bus_client_take_table(BusClient *cl, int64_t now_ns) {
        return bus_bucket_take(&cl->tables, 1, now_ns, BUS_CLIENT_TABLES_BURST, BUS_CLIENT_TABLES_PER_S);
}

/* A record with nothing queued and every budget back in full says nothing a new one would not:
 * let it go. How many went. */
static size_t clients_sweep(BusClients *c, int64_t now_ns) {
        size_t freed = 0;

        for (size_t i = 0; i < BUCKETS; i++)
                for (BusClient **p = &c->buckets[i]; *p; ) {
                        BusClient *cl = *p;

                        if (cl->jobs > 0 ||
                            bus_bucket_peek(&cl->tables, now_ns, BUS_CLIENT_TABLES_BURST, BUS_CLIENT_TABLES_PER_S) <
                                    BUS_CLIENT_TABLES_BURST ||
                            bus_bucket_peek(&cl->reply_bytes, now_ns, BUS_CLIENT_REPLY_BURST_BYTES,
                                            BUS_CLIENT_REPLY_BYTES_PER_S) < BUS_CLIENT_REPLY_BURST_BYTES ||
                            bus_bucket_peek(&cl->values, now_ns, BUS_CLIENT_VALUES_BURST, BUS_CLIENT_VALUES_PER_S) <
                                    BUS_CLIENT_VALUES_BURST ||
                            bus_bucket_peek(&cl->replies, now_ns, BUS_CLIENT_REPLIES_BURST_BYTES,
                                            BUS_CLIENT_REPLIES_BYTES_PER_S) < BUS_CLIENT_REPLIES_BURST_BYTES) {
                                p = &cl->next_in_bucket;
                                continue;
                        }
                        *p = cl->next_in_bucket;
                        c->n--;
                        if (c->gone)
                                c->gone(cl, c->userdata);
                        client_free(cl);
                        freed++;
                }
        return freed;
}
