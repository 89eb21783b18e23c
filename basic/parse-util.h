/* SPDX-License-Identifier: MIT */
#pragma once

/* Checked parsing of the numbers users type (option values, values on a line). */

#include <stddef.h>
#include <stdint.h>

/* s without the spaces, tabs and CR around it. */
void parse_trim(const char **s, size_t *n);

/* The n bytes at s as a decimal integer; spaces, tabs and a CR around it are allowed. -EINVAL if
 * it is not one, -ERANGE if it does not fit in int64_t. */
int parse_int64(const char *s, size_t n, int64_t *ret);

/* The whole string s as an integer in [0, max], decimal or hexadecimal after "0x" (as X tools
 * print window ids); -EINVAL if it is not one (a sign, a space, octal), -ERANGE above max. */
int parse_uint64_hex(const char *s, uint64_t max, uint64_t *ret);

/* The whole string s as a finite decimal number in [min, max]; -EINVAL otherwise. */
int parse_double(const char *s, double min, double max, double *ret);
