/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Errors as values: a code and a message that names the path and the reason. */
#ifndef GROVE_ERROR_H
#define GROVE_ERROR_H

#include <stddef.h>

/*
 * Fallible functions return int: >= 0 on success, a negative errno or a
 * negative grove code (below) on failure. The caller owns a struct
 * grove_error (no allocation) and passes it last; the function that fails
 * fills it and returns the code, so failing is one line:
 *
 *	return grove_error_errno(err, -errno, "open '%s'", name);
 *
 * Callers add context on the way out with grove_error_prefix(). Library code
 * never prints; main() prints err->msg once.
 *
 * Message rules: lowercase first word, subject in quotes, no final period,
 * the system's reason last ("remove link '.vimrc': Permission denied").
 */

#define GROVE_ERROR_MSG_MAX 1024

enum grove_code {
	GROVE_E_BASE = 1024,
	GROVE_E_CONFLICT,     /* the plan has conflicts; nothing changed */
	GROVE_E_USAGE,        /* bad command line */
	GROVE_E_PRECONDITION, /* the world is not what the plan expected */
	GROVE_E_ESCAPE,       /* a path would leave its root */
	GROVE_E_BADINPUT,     /* a name or path that grove refuses */
	GROVE_E_PARTIAL,      /* failed part-way and rolled back */
	GROVE_E_STUCK,        /* failed part-way and could not roll back */
	GROVE_E_CONFIG,       /* bad configuration file */
	GROVE_E_UNSUPPORTED,  /* the filesystem lacks a needed atomic operation */
	GROVE_E_INTERNAL,     /* a bug */
	GROVE_E_NOT_DURABLE,  /* done and committed, but syncing the log's folder failed */
	GROVE_E_NOPACKAGE,    /* a package the stow dir does not contain (Stow: exit 2) */
};

#define GROVE_ERROR_PATH_MAX 4096
struct grove_error {
	int code; /* 0, or the negative code last set */
	char msg[GROVE_ERROR_MSG_MAX];
	/* The path the error is about, when the site that failed names one (grove_error_path);
	 * else empty. Setting a new error clears it. --json prints it as the error's "path". */
	char path[GROVE_ERROR_PATH_MAX];
};

/* Sets err (may be NULL) to code with a printf message; returns code. */
int grove_error_set(struct grove_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* As grove_error_set, then appends ": <strerror(-code)>" when code is an errno. */
int grove_error_errno(struct grove_error *err, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Prepends "<context>: " to err's message; returns err->code. */
int grove_error_prefix(struct grove_error *err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#ifdef __clang_analyzer__
/* clang-tidy's analyzer sees one file at a time: tell it what the two setters return, so an
 * error path that returns their result is known to be negative (else every caller's "r < 0"
 * check looks escapable). The macros call the functions above; builds never see them. */
#define grove_error_set(err, code, ...)   (grove_error_set((err), (code), __VA_ARGS__), (code))
#define grove_error_errno(err, code, ...) (grove_error_errno((err), (code), __VA_ARGS__), (code))
#endif

/* Records path (may be NULL: none) as the path err is about, after one of the setters above
 * (a path too long is cut to nothing rather than kept in part); returns err->code. */
int grove_error_path(struct grove_error *err, const char *path);
/* The same with the path dir/name. */
int grove_error_path_in(struct grove_error *err, const char *dir, const char *name);
/* Clears err to code 0 and an empty message. */
void grove_error_clear(struct grove_error *err);

/* A short text for a code: strerror for errno values, a phrase for grove codes. */
const char *grove_strerror(int code);

#endif
