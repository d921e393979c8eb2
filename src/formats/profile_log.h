/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Recognising a profile's log target: asked by sessions before they change or recover a target, and
 * by nothing that sessions depend on (profile.h includes it; it includes no profile or session). */
#ifndef GROVE_PROFILE_LOG_H
#define GROVE_PROFILE_LOG_H

#include <stdint.h>

#include "grove/error.h"
#include "grove/fs.h"
#include "grove/journal.h"

/* The record file inside every generation folder (see profile.h). */
#define GROVE_PROFILE_RECORD ".grove-generation"

/*
 * Whether target is a profile's log target: the folder NAME.generations of
 * profile D/NAME, which only `grove profile` changes and recovers. With j
 * NULL, by the disk: the profile's links beside the folder (NAME ->
 * NAME-<n>-link, NAME-<n>-link -> NAME.generations/<n>) or a generation
 * (a numbered folder holding its record) inside it. With j, by the log: a
 * transaction of target_id with an op only a profile makes. *ret_profile
 * gets the profile link's path (malloc'd), or NULL when target is not one.
 */
int grove_profile_log_owner(const struct grove_root *target, struct grove_journal *j,
			    int64_t target_id, char **ret_profile, struct grove_error *err);

#endif
