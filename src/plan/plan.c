/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Plans as data: ops, conflicts and warnings, each owning its strings. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "grove/plan.h"
#include "grove/text.h"

#include "banned.h" /* last */

void
grove_plan_init(struct grove_plan *plan)
{
	memset(plan, 0, sizeof(*plan));
}

/*
 * The blocks packed ops' strings are copied into, newest first: each op's strings one after the
 * other, never freed alone. A block is at least TEXTS_MIN bytes and at most TEXTS_MAX (below
 * malloc's mmap threshold), each twice the last, so that a small plan takes one small block and
 * a big one few allocations; an op whose strings need more takes a block of their size.
 */
struct grove_plan_texts {
	struct grove_plan_texts *next;
	size_t used, cap;
	char data[];
};

#define TEXTS_MIN ((size_t)4 << 10)
#define TEXTS_MAX ((size_t)64 << 10)

static void
texts_free(struct grove_plan *plan)
{
	while (plan->texts) {
		struct grove_plan_texts *b = plan->texts;
		plan->texts = b->next;
		free(b);
	}
}

/* Room for n bytes in the plan's blocks, or NULL. */
static char *
texts_take(struct grove_plan *plan, size_t n)
{
	struct grove_plan_texts *b = plan->texts;
	char *at;

	if (!b || b->cap - b->used < n) {
		size_t cap = b ? b->cap * 2 : TEXTS_MIN;

		if (cap > TEXTS_MAX)
			cap = TEXTS_MAX;
		if (cap < n)
			cap = n;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->next = plan->texts;
		b->used = 0;
		b->cap = cap;
		plan->texts = b;
	}
	at = b->data + b->used;
	b->used += n;
	return at;
}

static void
op_release(struct grove_op *op)
{
	if (op->packed)
		return; /* its strings go with the plan's blocks */
	free(op->path);
	free(op->old_text);
	free(op->text);
	free(op->stow_path);
	free(op->package);
}

void
grove_plan_release(struct grove_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->n_ops; i++)
		op_release(&plan->ops[i]);
	free(plan->ops);
	texts_free(plan);
	for (size_t i = 0; i < plan->n_conflicts; i++) {
		free(plan->conflicts[i].action);
		free(plan->conflicts[i].package);
		free(plan->conflicts[i].path);
		free(plan->conflicts[i].message);
	}
	free(plan->conflicts);
	for (size_t i = 0; i < plan->n_warnings; i++)
		free(plan->warnings[i]);
	free(plan->warnings);
	grove_plan_init(plan);
}

static int
dup_opt(const char *s, char **ret)
{
	*ret = NULL;
	if (s && !(*ret = strdup(s)))
		return -ENOMEM;
	return 0;
}

static int
grow(void **arr, size_t *cap, size_t n, size_t size)
{
	void *p;
	size_t c;

	if (n < *cap)
		return 0;
	c = *cap ? *cap * 2 : 16;
	p = realloc(*arr, c * size);
	if (!p)
		return -ENOMEM;
	*arr = p;
	*cap = c;
	return 0;
}

/* Hands the ops to the sink once it holds a batch of them. */
static int
maybe_flush(struct grove_plan *plan)
{
	struct grove_plan_sink *sink = plan->sink;
	int r;

	if (!sink || plan->n_ops <= sink->batch)
		return 0;
	r = sink->flush(sink, plan);
	if (r < 0)
		plan->sink = NULL;
	return r;
}

static int add_op(struct grove_plan *plan, enum grove_op_kind kind, const char *path,
		  const char *old_text, const char *text, const char *stow_path,
		  const char *package, bool recorded);

int
grove_plan_add_op(struct grove_plan *plan, enum grove_op_kind kind, const char *path,
		  const char *old_text, const char *text, const char *stow_path,
		  const char *package)
{
	return add_op(plan, kind, path, old_text, text, stow_path, package, false);
}

static int
add_op(struct grove_plan *plan, enum grove_op_kind kind, const char *path, const char *old_text,
       const char *text, const char *stow_path, const char *package, bool recorded)
{
	struct grove_op op = { .kind = kind, .recorded = recorded };

	if (grow((void **)&plan->ops, &plan->cap_ops, plan->n_ops, sizeof(op)) < 0)
		return -ENOMEM;
	if (dup_opt(path, &op.path) < 0 || dup_opt(old_text, &op.old_text) < 0 ||
	    dup_opt(text, &op.text) < 0 || dup_opt(stow_path, &op.stow_path) < 0 ||
	    dup_opt(package, &op.package) < 0) {
		op_release(&op);
		return -ENOMEM;
	}
	plan->ops[plan->n_ops++] = op;
	return maybe_flush(plan);
}

/* Copies s (or NULL) to *at, moving *at past it. */
static char *
pack(const char *s, size_t n, char **at)
{
	char *r = *at;

	if (!s)
		return NULL;
	memcpy(r, s, n);
	*at += n;
	return r;
}

int
grove_plan_add_op_packed(struct grove_plan *plan, enum grove_op_kind kind, const char *path,
			 const char *old_text, const char *text, const char *stow_path,
			 const char *package)
{
	const char *s[] = { path, old_text, text, stow_path, package };
	size_t n[sizeof(s) / sizeof(s[0])], total = 0;
	struct grove_op *op;
	char *at;

	for (size_t i = 0; i < sizeof(s) / sizeof(s[0]); i++)
		total += n[i] = s[i] ? strlen(s[i]) + 1 : 0;
	if (grow((void **)&plan->ops, &plan->cap_ops, plan->n_ops, sizeof(*op)) < 0 ||
	    !(at = texts_take(plan, total)))
		return -ENOMEM;
	op = &plan->ops[plan->n_ops++];
	*op = (struct grove_op){ .kind = kind, .packed = true };
	op->path = pack(path, n[0], &at);
	op->old_text = pack(old_text, n[1], &at);
	op->text = pack(text, n[2], &at);
	op->stow_path = pack(stow_path, n[3], &at);
	op->package = pack(package, n[4], &at);
	return maybe_flush(plan);
}

void
grove_plan_truncate(struct grove_plan *plan, size_t n)
{
	for (size_t i = n; i < plan->n_ops; i++)
		op_release(&plan->ops[i]);
	if (n < plan->n_ops)
		plan->n_ops = n;
}

void
grove_plan_drop_ops(struct grove_plan *plan)
{
	for (size_t i = 0; i < plan->n_ops; i++)
		op_release(&plan->ops[i]);
	texts_free(plan);
	plan->n_logged += plan->n_ops;
	plan->n_ops = 0;
}

int
grove_plan_add_recorded(struct grove_plan *plan, enum grove_op_kind kind, const char *path,
			const char *text, const char *package)
{
	bool unlink = kind == GROVE_OP_UNLINK;

	return add_op(plan, kind, path, unlink ? text : NULL, unlink ? NULL : text, NULL, package,
		      true);
}

int
grove_plan_add_conflict(struct grove_plan *plan, const char *action, const char *package,
			const char *path, const char *message)
{
	struct grove_conflict c = { 0 };

	if (grow((void **)&plan->conflicts, &plan->cap_conflicts, plan->n_conflicts, sizeof(c)) < 0)
		return -ENOMEM;
	if (dup_opt(action, &c.action) < 0 || dup_opt(package, &c.package) < 0 ||
	    dup_opt(path, &c.path) < 0 || dup_opt(message, &c.message) < 0) {
		free(c.action);
		free(c.package);
		free(c.path);
		free(c.message);
		return -ENOMEM;
	}
	plan->conflicts[plan->n_conflicts++] = c;
	return 0;
}

int
grove_plan_add_warning(struct grove_plan *plan, const char *message)
{
	char *m;

	if (grow((void **)&plan->warnings, &plan->cap_warnings, plan->n_warnings, sizeof(char *)) <
	    0)
		return -ENOMEM;
	if (!(m = strdup(message)))
		return -ENOMEM;
	plan->warnings[plan->n_warnings++] = m;
	return 0;
}

static int
action_rank(const char *action)
{
	return strcmp(action, "unstow") == 0 ? 0 : 1;
}

static int
cmp_conflict(const void *a, const void *b)
{
	const struct grove_conflict *x = a, *y = b;
	int r = action_rank(x->action) - action_rank(y->action);

	if (r)
		return r;
	if ((r = strcmp(x->package, y->package)))
		return r;
	return strcmp(x->message, y->message);
}

void
grove_plan_sort_conflicts(struct grove_plan *plan)
{
	size_t o = 0;

	if (plan->n_conflicts < 2)
		return;
	qsort(plan->conflicts, plan->n_conflicts, sizeof(*plan->conflicts), cmp_conflict);
	/* The same conflict found twice (a package checked whole, then entry by entry) is one. */
	for (size_t i = 0; i < plan->n_conflicts; i++) {
		struct grove_conflict *c = &plan->conflicts[i];
		if (o > 0 && cmp_conflict(&plan->conflicts[o - 1], c) == 0) {
			free(c->action);
			free(c->package);
			free(c->path);
			free(c->message);
			continue;
		}
		plan->conflicts[o++] = *c;
	}
	plan->n_conflicts = o;
}

/* The one table of op names: the plan printer, the JSON output, the journal's rows and the
 * executor's messages all spell the ops this way. */
static const char *const op_kind_names[] = {
	[GROVE_OP_MKDIR] = "mkdir",   [GROVE_OP_LINK] = "link",   [GROVE_OP_UNLINK] = "unlink",
	[GROVE_OP_RELINK] = "relink", [GROVE_OP_RMDIR] = "rmdir", [GROVE_OP_UNFOLD] = "unfold",
	[GROVE_OP_FOLD] = "fold",     [GROVE_OP_ADOPT] = "adopt", [GROVE_OP_WRITE] = "write",
	[GROVE_OP_ERASE] = "erase",   [GROVE_OP_MOVE] = "move",
};

const char *
grove_op_kind_name(enum grove_op_kind kind)
{
	if ((unsigned)kind < sizeof(op_kind_names) / sizeof(op_kind_names[0]) &&
	    op_kind_names[kind])
		return op_kind_names[kind];
	return "?";
}

void
grove_plan_print(const struct grove_plan *plan, FILE *out)
{
	/* Names and texts are shown escaped (grove/text.h): a name in a package
	 * cannot forge a plan line or drive the reviewer's terminal. */
	grove_plan_foreach_op (plan, op) {
		fprintf(out, "%-6s ", grove_op_kind_name(op->kind));
		grove_fput_shown(op->path, out);
		switch (op->kind) {
		case GROVE_OP_LINK:
		case GROVE_OP_FOLD:
		case GROVE_OP_ADOPT:
		case GROVE_OP_RELINK:
			fputs(" -> ", out);
			grove_fput_shown(op->text, out);
			if (op->kind == GROVE_OP_ADOPT)
				fputs(" (file moved into the package)", out);
			if (op->kind != GROVE_OP_RELINK)
				break;
			/* fall through */
		case GROVE_OP_UNLINK:
		case GROVE_OP_UNFOLD:
			fputs(" (was -> ", out);
			grove_fput_shown(op->old_text, out);
			fputc(')', out);
			break;
		default:
			break;
		}
		if (op->recorded)
			fputs(op->kind == GROVE_OP_LINK ? " (recorded: on disk already)"
							: " (recorded: left on disk)",
			      out);
		fputc('\n', out);
	}
}

bool
grove_path_under(const char *path, const char *prefix)
{
	size_t l = strlen(prefix);

	if (l == 0)
		return true;
	return strncmp(path, prefix, l) == 0 && (path[l] == '\0' || path[l] == '/');
}
