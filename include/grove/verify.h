/* SPDX-License-Identifier: GPL-3.0-or-later */
/* grove verify: the log of one target against its filesystem, as a list of findings. */
#ifndef GROVE_VERIFY_H
#define GROVE_VERIFY_H

#include <stddef.h>
#include <stdint.h>

#include "grove/error.h"
#include "grove/session.h"

enum grove_verify_issue {
	GROVE_VERIFY_MISSING, /* an entry grove made is gone */
	GROVE_VERIFY_CHANGED, /* it is there but no longer what grove made */
	GROVE_VERIFY_BROKEN,  /* grove's link, as made, pointing into a stow dir at nothing */
	GROVE_VERIFY_FOREIGN, /* an entry grove does not own inside a folder grove made */
};

/* One entry that is not as the log says. */
struct grove_verify_finding {
	enum grove_verify_issue issue;
	char *path;     /* relative to the target */
	char *expected; /* the link text grove made; NULL for a folder grove made, or FOREIGN */
	/* The unfinished transaction (report.unfinished) this entry is part of: one of its ops
	 * touches the path, or the entry is one of its temporary entries; 0 when it is drift. */
	int64_t txn;
};

/* What grove_verify found, findings in the order of the log's owned entries (a FOREIGN entry
 * right after the folder it sits in would be). */
struct grove_verify_report {
	struct grove_verify_finding *findings;
	size_t n_findings;
	size_t checked; /* entries grove owns by the log */
	/* Findings by issue, those of the unfinished transaction left out (they are not drift:
	 * recovery, or the run at work, settles them)... */
	size_t missing, changed, broken, foreign;
	/* ...and counted here, with the transaction (0 when none is unfinished). */
	size_t unfinished_entries;
	int64_t unfinished;
};

/*
 * Checks every entry the log says grove owns in s's target: it must exist, be the link grove
 * made (with the same text) or a folder grove made, and a link that lands in a stow dir one of
 * the target's transactions used must resolve there. Entries in a folder grove made that grove
 * does not own are FOREIGN. An entry the log's unfinished transaction (INTENT or STUCK) touches
 * is still reported, marked with that transaction (finding.txn), since the entries grove owns
 * are the committed transactions' and its half-made changes would otherwise pass for drift or
 * someone else's. Reads only, beneath the roots it holds (the target, and the stow
 * dirs it opens itself and closes before returning; a stow dir that cannot be opened is not
 * looked into).
 *
 * On success *ret is filled (release with grove_verify_report_release) and 0 is returned; a
 * report with findings is still success. Fails only when the log cannot be read, or -ENOMEM.
 */
int grove_verify(struct grove_session *s, struct grove_verify_report *ret, struct grove_error *err);

/* Frees what grove_verify filled; accepts a zeroed report. */
void grove_verify_report_release(struct grove_verify_report *r);

/* "missing", "changed", "broken" or "foreign" (the names --json and the text output use). */
const char *grove_verify_issue_name(enum grove_verify_issue issue);

#endif
