#!/usr/bin/python3
# SPDX-License-Identifier: GPL-3.0-or-later
# Differential test: random scenarios run on GNU Stow 2.4.1 and on grove, whose resulting trees must agree.
"""Differential test of grove against GNU Stow 2.4.1.

Each scenario (one integer seed) builds a stow dir, packages and a target in a fresh temp dir, copies it, then
runs 1-4 operations with the same argv on both copies: Stow on WORK/a, grove on WORK/b.  After each operation it
compares the exit status (zero or not) and a listing of every entry under each copy (type, link text, file
contents).  Python 3 standard library only.

    stowdiff.py --stow-cmd 'perl -I LIB STOW' --grove PATH [--seed S] [--count N] [--only SEED] [--keep]
"""

import argparse
import difflib
import hashlib
import json
import multiprocessing
import os
import random
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

# ---------------------------------------------------------------------------------------------------------------
# Known deliberate differences.  Where Stow itself is buggy, grove refuses or does better (DESIGN.md, "Reference
# behaviour and known traps").  A difference in an operation that matches one of these is counted as "known", not
# as a difference.  The lead mirrors this list in the docs: keep the two in step.
KNOWN_KINDS = {
    # Stow unstows a folder it wants to fold back while a dangling foreign link sits inside: it plans the fold,
    # then dies half-way in process_tasks ("Could not remove directory"), leaving the target half-changed.
    # grove leaves the folder unfolded and succeeds.
    'dangling-link-in-fold': 'dangling foreign link inside a folder that unstow would fold: Stow dies half-way',
    # Stow's unstow_node() recurses into a target folder even where the package has a file, and then dies with
    # "unstow_contents() called with non-directory path".  grove does not die on it.
    'folder-over-file': 'unstow with a target folder where the package has a file: Stow dies',
    # A relative symlink inside a package that escapes the stow dir (or a symlink cycle) would make the target
    # reach outside the roots grove was given; Stow links it blindly, grove refuses it as a conflict.
    'escaping-package-link': 'package symlink escaping the stow dir, or a symlink cycle: grove refuses',
    # A link into another stow dir (one marked with .stow) outside the stow dir and the target: Stow counts it
    # as its own and reads that dir to unfold or fold it; grove reads nothing outside the roots it was given,
    # so such a link is foreign: stowing over it is a conflict (exit 1, nothing changed), and a folder holding
    # such links is not folded into one. Run from a second stow dir, the scenario's own stow dir (marked,
    # outside the target) is such a stow dir.
    'other-stow-dir': 'link into a marked stow dir outside the roots: grove treats it as foreign',
    # Stow dies while planning (nothing changed on its side), e.g. "unstow_contents() called with invalid
    # target" when an earlier package's folded link is already scheduled for removal, or, with --dotfiles,
    # "cannot read directory" under the wrong name.  grove plans the same request.
    'stow-dies-planning': 'Stow dies while planning and changes nothing; grove completes or refuses cleanly',
    # Stow's foldable() skips entries its -e test calls missing (dangling links) and takes a link text with
    # an empty parent (such as '/usr') for "no parent yet": it folds such a folder anyway, unlinking or
    # dropping those links (and the folders above that fold after it; and, if the folder is unfolded again
    # in the same run, the package links that the current options no longer produce, or conflicts on them
    # that abort the run).  grove keeps the folder, and every link in it.
    'fold-skips-entries': 'Stow folds a folder over dangling or parentless links and drops links; grove keeps them',
    # Stow unstows a folded link and re-stows the same path in one run; the new link task replaces the removal
    # task, so its later "is there something here?" tests look through the old link on disk and see the old
    # package's files as existing targets: a false conflict (exit 1).  grove plans on its own view.
    'stow-sees-through-removed-link': 'Stow sees entries through a link it is removing (false conflicts, missing links)',
    # Stow's own plan fails while it applies it: it creates a link inside a folder it has not made yet,
    # or moves a file twice, and dies half-way (exit 2, target half-changed). grove's plan is checked op
    # by op and completes; every link it made must resolve.
    'stow-dies-executing': 'Stow dies half-way applying its own plan; grove completes',
    # A package that is itself a symlink leaving the stow dir (or looping back to it): Stow follows it
    # wherever it leads; grove refuses the package (exit 1, nothing changed) and says why.
    'package-link-leaves': 'a package that is a link leaving the stow dir or looping: grove refuses it',
}


# Stow failures seen in these scenarios that DESIGN.md does not (yet) name.  They are still counted as
# differences; the report only tags them so the lead can decide whether to add them to KNOWN_KINDS.
STOW_DIES_HINTS = {
    'unstow_contents() called with invalid target':
        'Stow dies while planning an unstow of several packages when an earlier package\'s folded link is '
        'already scheduled for removal',
    'cannot read directory':
        'Stow dies while planning: with --dotfiles it looks for the folded folder under the wrong name',
    'INTERNAL ERROR':
        'Stow hits an internal error',
}


def _parent_text(text):
    parts = [p for p in text.split('/')]
    while parts and parts[-1] == '':
        parts.pop()
    return '/'.join(parts[:-1])


def _fold_skipped_folders(before, grove_root):
    """Folders holding a link that Stow's foldable() skips: dangling (checked in grove's copy, where the
    link is still present) or whose text has an empty parent."""
    out = set()
    for line in before:
        if ' -> ' not in line:
            continue
        path, text = line.split(' -> ', 1)
        full = os.path.join(grove_root, path)
        if _parent_text(text) == '' or (os.path.lexists(full) and not os.path.exists(full)):
            out.add(os.path.dirname(path))
    return out


def _path_of(line):
    for sep in (' -> ', ' = ', ' (special)'):
        if sep in line:
            return line.split(sep, 1)[0]
    return line.rstrip('/')


def classify_known(scn, op, stow_res, grove_res, before=None, la=None, lb=None, grove_root=None):
    """Name the known kind that explains a difference in this operation, or None."""
    err, grc = stow_res['stderr'], grove_res['rc']
    # grove's side must be what the kind promises: success, or a clean refusal (exit 1), never a crash.
    if stow_res['rc'] != 0 and 'Could not remove directory' in err and grc in (0, 1):
        return 'dangling-link-in-fold'
    if stow_res['rc'] != 0 and 'unstow_contents() called with non-directory path' in err and grc in (0, 1):
        return 'folder-over-file'
    # Stow may succeed or die (a perl die exits with errno, never 1); grove must refuse and change nothing.
    # The escaping link may be in a package the op does not name: unfolding another package's folded link
    # exposes it.  Its name ('escape') must appear in grove's message, so other refusals are not hidden here.
    if scn.escaping_pkgs and grc == 1 and stow_res['rc'] != 1 and 'escape' in grove_res['stderr']:
        return 'escaping-package-link'
    # In the package '.' (the whole stow dir), the package link plink is an entry like any other: one that
    # climbs out of the stow dir (and back in, or not) is refused where it is met, as in any package.
    if scn.plink and '.' in op['pkgs'] and grc == 1 and stow_res['rc'] != 1 and \
            re.search(r'source is a symlink that leaves the stow directory or loops \S*plink ',
                      grove_res['stderr']):
        return 'escaping-package-link'
    # grove runs as "stow" (run.sh), whose refusal is Stow's own error (exit 2); as grove it says why.
    if scn.plink_leaves and (before is None or lb == before) and (
            (grc == 1 and "does not contain package 'plink' (it is a link that leaves the stow "
             "directory or loops)" in grove_res['stderr']) or
            (grc == 2 and re.search(r'^stow: ERROR: The stow directory \S+ does not contain package '
                                    r'plink$', grove_res['stderr'], re.M))):
        return 'package-link-leaves'
    if before is None:
        return None
    changed = set(la) ^ set(lb)
    # Another stow dir: grove refused a path whose link points into it, or every difference concerns links
    # into it (kept unfolded, or not folded into it).
    if any(line.startswith('other/') for line in before):
        gerr = grove_res['stderr']
        if grc == 1 and 'not owned by stow: ' in gerr:
            named = [l.split('not owned by stow: ', 1)[1].strip() for l in gerr.splitlines()
                     if 'not owned by stow: ' in l]
            if named and all(any(b.startswith(scn.target_rel + '/' + n + ' -> ') and 'other/zeta' in b
                                 for b in before) for n in named):
                return 'other-stow-dir'
        zeta = {_path_of(x) for x in changed if 'other/zeta' in x}
        if grc == 0 and zeta and all('other/zeta' in l or any(z == _path_of(l) or z.startswith(_path_of(l) + '/')
                                                            for z in zeta) for l in changed):
            return 'other-stow-dir'
    # The same seen from a second stow dir (-d T/stow2): the scenario's own stow dir, marked and
    # outside the target, is then the other stow dir, and every difference concerns links into it
    # (a folder of them that Stow folds and grove keeps, or the reverse).
    S = scn.stow_rel
    if op.get('stow_rel') and grc == 0 and changed and \
            not (S + '/').startswith(scn.target_rel + '/') and \
            os.path.exists(os.path.join(grove_root, S, '.stow')):
        def into_s(line):
            if ' -> ' not in line:
                return False
            path, text = line.split(' -> ', 1)
            dest = os.path.normpath(os.path.join(os.path.dirname(path), text))
            return dest == S or dest.startswith(S + '/')
        into = {_path_of(x) for x in changed if into_s(x)}
        if into and all(into_s(l) or any(z.startswith(_path_of(l) + '/') for z in into)
                        for l in changed):
            return 'other-stow-dir'
    if stow_res['rc'] not in (0, 1) and la == before and grc in (0, 1) and \
            any(h in err for h in ('unstow_contents() called with invalid target', 'cannot read directory')):
        return 'stow-dies-planning'
    # Stow sees "existing targets" through a folded link whose removal it has already planned (a later link
    # task for the same path hides the removal from parent_link_scheduled_for_removal): a false conflict.
    if stow_res['rc'] == 1 and grc == 0:
        targets = re.findall(r'over existing target (\S+) since neither a link nor a directory', err) + \
            re.findall(r'existing target is not owned by stow: (\S+)', err)
        entries = {_path_of(l) for l in before}
        links = {_path_of(l) for l in before if ' -> ' in l}
        def seen_through_link(t):
            full = scn.target_rel + '/' + t
            parts = full.split('/')
            return full not in entries and any('/'.join(parts[:i]) in links for i in range(1, len(parts)))
        if targets and all(seen_through_link(t) for t in targets) and \
                err.count('  * ') == len(targets):
            return 'stow-sees-through-removed-link'
    only_grove = set(lb) - set(la)
    links_before = {_path_of(l) for l in before if ' -> ' in l}

    def under_link_before(line):
        parts = _path_of(line).split('/')
        return any('/'.join(parts[:i]) in links_before for i in range(1, len(parts)))
    # The silent form of the same Stow bug: looking through the old link it is removing, Stow finds
    # the folder "already there" and makes nothing; grove makes the links the package asks for.
    if stow_res['rc'] == 0 and grc == 0 and changed and changed == only_grove and \
            all(under_link_before(l) for l in only_grove):
        return 'stow-sees-through-removed-link'
    # Stow fails while applying its own plan (it orders a link inside a folder it has not made, or
    # moves a file it already moved): it dies half-way. grove must have completed, and every link it
    # made must resolve.
    if stow_res['rc'] not in (0, 1) and grc == 0 and \
            any(h in err for h in ('Could not create symlink', 'Could not move', 'Could not create directory')):
        made = [l for l in only_grove if ' -> ' in l and l not in before]
        if all(os.path.exists(os.path.join(grove_root, _path_of(l))) for l in made):
            return 'stow-dies-executing'
    # A folder that holds a link to a package link leaving the stow dir: Stow follows it (outside
    # the roots) to decide folding; grove does not, so it keeps the folder as it is.
    if scn.escaping_pkgs and grc == 0 and changed:
        esc_dirs = {os.path.dirname(_path_of(l)) for l in before if ' -> ' in l and 'escape' in l}
        if esc_dirs and all(any(_path_of(l) == d or _path_of(l).startswith(d + '/') or
                                d.startswith(_path_of(l) + '/') for d in esc_dirs) for l in changed):
            return 'escaping-package-link'
    folders = _fold_skipped_folders(before, grove_root)
    if grc == 0:
        # Inside such a folder, or a folder above it that Stow removes once it folded it.
        if changed and folders and all(any(_path_of(l) == f or _path_of(l).startswith(f + '/') or
                                           f.startswith(_path_of(l) + '/')
                                           for f in folders) for l in changed):
            return 'fold-skips-entries'
    # Stow folds such a folder and, later in the same run, unfolds it again for another package:
    # it then meets the link it skipped, or the links of a package it is unstowing, as conflicts
    # (exit 1, nothing changed), where grove keeps the folder and completes.
    if stow_res['rc'] == 1 and grc == 0 and la == before and folders:
        named = re.findall(r'(?:existing target is not owned by stow:|existing target is stowed to a '
                           r'different package:|over existing target) (\S+)', err)
        if named and err.count('  * ') == len(named) and \
                all(any((scn.target_rel + '/' + n).startswith(f + '/') for f in folders) for n in named):
            return 'fold-skips-entries'
    # Stow folds such a folder (deleting the user's link in it) and then stows into the folded
    # link; grove keeps the folder, so stowing the same entry meets the user's link: a conflict
    # (exit 1, nothing changed) on a path inside that folder.
    if grc == 1 and lb == before and folders:
        named = re.findall(r'(?:existing target is not owned by stow:|over existing target) (\S+)',
                           grove_res['stderr'])
        if named and all(any((scn.target_rel + '/' + n).startswith(f + '/') for f in folders)
                         for n in named):
            return 'fold-skips-entries'
    return None


# ---------------------------------------------------------------------------------------------------------------
# Scenario generation.  Everything below draws from one random.Random(seed), so a seed is a whole scenario.

PKG_NAMES = ['alpha', 'beta', 'gamma', 'delta', 'eps']
# Shared folders: overlap between packages is what makes folding and unfolding happen.
FOLDERS = [
    '', '', 'bin', 'bin', 'lib', 'lib', 'share', 'share/x', 'share/x', 'share/x/y', 'share/x/y/z', 'share/doc',
    'etc', '.config', '.config/app', 'dot-config', 'dot-config/app', 'lib/dot-hidden', 'lib/pkgconfig',
]
FILES = ['f1', 'f2', 'f3', 'tool', 'notes.txt', 'data.conf', 'foo~', '.hidden', 'dot-rc', '#auto#', 'x.so',
         'README.md', 'LICENSE']
TOP_FILES = ['.bashrc', 'dot-bashrc', 'dot-profile', '.profile', 'README.md', 'README', 'LICENSE.txt', 'COPYING',
             '.gitignore', 'Makefile', 'tool']
LOCAL_IGNORE_LINES = ['f1', r'\.txt', '^/bin/tool', 'x', '# a comment', 'share', r'f[23]', '^/README.*',
                      r'.+~', 'dot-rc']
IGNORE_RES = ['f1', r'\.txt', 'tool', r'f[23]', 'y', r'.*\.so', 'rc']
DEFER_RES = ['bin', 'share', 'share/x', 'lib', r'\.config', 'etc']
ABS_LINK_TEXTS = ['/nonexistent/grove-diff', '/dev/null', '/usr', '/etc/passwd']


def rel(frm_dir, to_path):
    return os.path.relpath(to_path, frm_dir)


class Scenario:
    """Builds one copy of a scenario on disk; the description is kept for classification and reporting."""

    def __init__(self, seed):
        self.seed = seed
        self.r = random.Random(seed)
        r = self.r
        self.layout = r.choice(['inner', 'inner', 'sibling', 'deep'])
        if self.layout == 'inner':
            self.stow_rel, self.target_rel = 'target/stow', 'target'
        elif self.layout == 'sibling':
            self.stow_rel, self.target_rel = 'stow', 'target'
        else:
            self.stow_rel, self.target_rel = 'opt/stowdir/s', 'home/u'
        npkg = r.randint(1, 5)
        self.pkgs = r.sample(PKG_NAMES, npkg)
        self.escaping_pkgs = set()
        self.dotfiles_bias = r.random() < 0.4
        self.actions = []      # list of (kind, relpath, arg) applied to the copy root
        self.pkg_files = {}    # pkg -> set of file relpaths inside the package (as named in the package)
        self.pkg_dirs = {}     # pkg -> set of folder relpaths inside the package
        self._gen()
        # Features added later draw from their own generator, so the scenarios above stay as they were.
        self.r2 = random.Random(seed * 7919 + 17)
        self.plink = None
        self.plink_leaves = False
        self._gen_plink()
        self.stow2_ops = []
        self._gen_stow2()
        self.dot_ops = []
        self._gen_dot()

    # -- building ---------------------------------------------------------------------------------------------
    def mkdir(self, p):
        self.actions.append(('d', p, None))

    def mkfile(self, p, content):
        self.actions.append(('f', p, content))

    def mklink(self, p, text):
        self.actions.append(('l', p, text))

    def _gen(self):
        r = self.r
        S, T = self.stow_rel, self.target_rel
        self.mkdir(T)
        self.mkdir(S)
        self.mkdir('ext/d')
        self.mkfile('ext/d/outside', 'outside\n')
        if r.random() < 0.3:
            self.mkfile(S + '/.stow', '')
        for pkg in self.pkgs:
            files, dirs = set(), set()
            for _ in range(r.randint(1, 4)):
                folder = r.choice(FOLDERS)
                if folder:
                    parts = folder.split('/')
                    for i in range(1, len(parts) + 1):
                        dirs.add('/'.join(parts[:i]))
                names = TOP_FILES if not folder else FILES
                for name in r.sample(names, r.randint(1, 3)):
                    files.add(folder + '/' + name if folder else name)
            # A file path must not also be a folder path in the same package.
            files = {f for f in files if f not in dirs}
            if r.random() < 0.15:
                dirs.add('.git')
                files.add('.git/config')
            if r.random() < 0.1:
                # An empty folder in the package.
                d = r.choice(['empty', 'share/empty', 'lib/empty'])
                if d not in files and not any(f.startswith(d + '/') for f in files):
                    for i, _ in enumerate(d.split('/')):
                        dirs.add('/'.join(d.split('/')[:i + 1]))
            self.mkdir(S + '/' + pkg)
            for d in sorted(dirs):
                self.mkdir(S + '/' + pkg + '/' + d)
            for f in sorted(files):
                self.mkfile(S + '/' + pkg + '/' + f, '%s:%s\n' % (pkg, f))
            if r.random() < 0.2:
                lines = r.sample(LOCAL_IGNORE_LINES, r.randint(1, 3))
                self.mkfile(S + '/' + pkg + '/.stow-local-ignore', '\n'.join(lines) + '\n')
            # Relative symlinks inside the package.
            flist = sorted(files)
            if flist and r.random() < 0.35:
                f = r.choice(flist)
                d = os.path.dirname(f)
                name = (d + '/' if d else '') + 'alias-' + pkg
                if name not in files and name not in dirs:
                    self.mklink(S + '/' + pkg + '/' + name, os.path.basename(f))
                    files.add(name)
            if flist and r.random() < 0.15:
                # Link to a file in another folder of the same package.
                f, g = r.choice(flist), r.choice(flist)
                d = os.path.dirname(g)
                name = (d + '/' if d else '') + 'cross-' + pkg
                if name not in files and name not in dirs:
                    self.mklink(S + '/' + pkg + '/' + name, rel(d or '.', f))
                    files.add(name)
            if dirs and r.random() < 0.1:
                # Link to a sibling folder.
                d = r.choice(sorted(dirs))
                par = os.path.dirname(d)
                name = (par + '/' if par else '') + 'dirlink'
                if name not in files and name not in dirs:
                    self.mklink(S + '/' + pkg + '/' + name, os.path.basename(d))
                    files.add(name)
            if r.random() < 0.08:
                # Escapes the stow dir (to ext/d/outside within the copy), or a cycle.
                d = r.choice(sorted(dirs) or [''])
                name = (d + '/' if d else '') + 'escape'
                if name not in files and name not in dirs:
                    if r.random() < 0.6:
                        here = os.path.dirname(S + '/' + pkg + '/' + name)
                        self.mklink(S + '/' + pkg + '/' + name, rel(here, 'ext/d/outside'))
                    else:
                        self.mklink(S + '/' + pkg + '/' + name, 'escape')
                    files.add(name)
                    self.escaping_pkgs.add(pkg)
            self.pkg_files[pkg] = files
            self.pkg_dirs[pkg] = dirs
        self._gen_target()

    def _gen_plink(self):
        """A package that is itself a symlink (Stow's t/unstow.t pkg7b): to a package or a folder of one,
        straight or climbing out of the stow dir and back in, or leaving it, or looping."""
        r, S = self.r2, self.stow_rel
        if r.random() >= 0.15:
            return
        pkg = r.choice(self.pkgs)
        dirs = sorted(self.pkg_dirs[pkg])
        inner = pkg + ('/' + r.choice(dirs) if dirs and r.random() < 0.4 else '')
        parts = S.split('/')
        up = r.choice([1, 1, 2]) if len(parts) >= 2 else 1
        back = '/'.join(['..'] * up + parts[-up:])
        kind = r.choice(['plain', 'back', 'back', 'back', 'leave', 'loop'])
        if kind == 'plain':
            text = inner
        elif kind == 'back':
            text = back + '/' + inner
        elif kind == 'leave':
            text = rel(S, 'ext/d')
            self.plink_leaves = True
        else:
            text = r.choice([back, '..', 'plink'])
            self.plink_leaves = True
        self.mklink(S + '/plink', text)
        self.plink = text

    def _gen_dot(self):
        """The stow dir itself as one package (`stow .`, the dotfiles repository layout): dotfiles, a .git
        folder and a README at the top of the stow dir beside the packages, and 1-3 operations on the package
        '.' (stow, unstow, restow; with --dotfiles as the scenario leans; run from the stow dir with only -t, or
        with -d from elsewhere) among the scenario's others."""
        r, S = random.Random(self.seed * 7919 + 61), self.stow_rel
        if r.random() >= 0.2:
            return
        for name in r.sample(['.zshrc', 'dot-zshrc', 'README.md', 'LICENSE', '.gitignore', 'tool', 'notes~'],
                             r.randint(1, 4)):
            self.mkfile(S + '/' + name, name + '\n')
        for d in r.sample(['.config/app', 'dot-config/app', 'bin', 'share/x'], r.randint(0, 2)):
            self.mkfile(S + '/' + d + '/f' + str(r.randint(1, 3)), d + '\n')
        if r.random() < 0.5:
            self.mkfile(S + '/.git/config', '[core]\n')
        if r.random() < 0.2:
            self.mkfile(S + '/.stow-local-ignore', '\n'.join(r.sample(LOCAL_IGNORE_LINES, 2)) + '\n')
        for _ in range(r.randint(1, 3)):
            self.dot_ops.append((r.randint(0, 4), r.choice(['-S', '-S', '-D', '-R']),
                                 self.dotfiles_bias if r.random() < 0.85 else not self.dotfiles_bias,
                                 r.random() < 0.5))

    def _gen_stow2(self):
        """A second stow dir inside the target (Stow's t/examples.t "bug 2"): T/stow2, usually marked with
        .stow, with a package zeta2 sharing a folder with this stow dir's packages, and in the target the
        link (folded, or a folder of links) zeta2 left there."""
        r, T = random.Random(self.seed * 7919 + 43), self.target_rel
        if r.random() >= 0.2:
            return
        dirs = sorted({d for p in self.pkgs for d in self.pkg_dirs[p]})
        if not dirs:
            return
        d = r.choice(dirs)
        tp = self._target_name(d)
        used = [a[1] for a in self.actions if a[1].startswith(T + '/')]
        full = T + '/' + tp
        if any(u == full or u.startswith(full + '/') or full.startswith(u + '/') and a != 'd'
               for u, a in ((a[1], a[0]) for a in self.actions if a[1].startswith(T + '/'))):
            return
        del used
        Z = T + '/stow2'
        self.mkdir(Z)
        if r.random() < 0.85:
            self.mkfile(Z + '/.stow', '')
        files = ['z2file'] + (['sub/z2deep'] if r.random() < 0.4 else [])
        for f in files:
            self.mkfile(Z + '/zeta2/' + d + '/' + f, 'zeta2:%s\n' % f)
        parent = os.path.dirname(tp)
        for i, _ in enumerate(parent.split('/') if parent else []):
            self.mkdir(T + '/' + '/'.join(parent.split('/')[:i + 1]))
        here = T + '/' + parent if parent else T
        if r.random() < 0.7:
            self.mklink(full, rel(here, Z + '/zeta2/' + d))
        else:
            self.mkdir(full)
            self.mklink(full + '/z2file', rel(full, Z + '/zeta2/' + d + '/z2file'))
            if 'sub/z2deep' in files:
                self.mklink(full + '/sub', rel(full, Z + '/zeta2/' + d + '/sub'))
        for _ in range(r.choice([0, 1, 1, 2])):
            self.stow2_ops.append((r.randint(0, 4), r.choice(['-S', '-D', '-R']),
                                   r.random() < 0.5))

    def _target_name(self, p, dotfiles=None):
        if dotfiles is None:
            dotfiles = self.dotfiles_bias
        if not dotfiles:
            return p
        return '/'.join('.' + s[4:] if s.startswith('dot-') and len(s) > 4 else s for s in p.split('/'))

    def _gen_target(self):
        r = self.r
        S, T = self.stow_rel, self.target_rel
        made_dirs = set()

        def ensure_dir(d):
            parts = d.split('/') if d else []
            for i in range(1, len(parts) + 1):
                sub = '/'.join(parts[:i])
                if sub not in made_dirs:
                    made_dirs.add(sub)
                    self.mkdir(T + '/' + sub)

        taken = set()
        all_files = [(p, f) for p in self.pkgs for f in sorted(self.pkg_files[p])]
        all_dirs = [(p, d) for p in self.pkgs for d in sorted(self.pkg_dirs[p])]
        n = r.randint(0, 5)
        for _ in range(n):
            kind = r.choice(['file', 'file', 'dir', 'dir', 'dir-over-file', 'file-over-dir', 'abs-link',
                             'rel-link', 'dangling', 'stale', 'stowed', 'stowed-folder', 'fold-with-dangling',
                             'other-stow'])
            if kind in ('file', 'dir-over-file', 'abs-link', 'rel-link', 'dangling', 'stale', 'stowed') \
                    and all_files:
                pkg, f = r.choice(all_files)
                tp = self._target_name(f)
            elif all_dirs:
                pkg, d = r.choice(all_dirs)
                tp = self._target_name(d)
            else:
                continue
            if tp in taken or any(tp.startswith(t + '/') for t in taken):
                continue
            if kind in ('dir', 'file-over-dir', 'dir-over-file', 'fold-with-dangling') and \
                    any(t.startswith(tp + '/') for t in taken):
                continue
            parent = os.path.dirname(tp)
            if any(parent == t or parent.startswith(t + '/') for t in taken):
                continue
            ensure_dir(parent)
            here = T + '/' + parent if parent else T
            pkg_path = S + '/' + pkg + '/' + (f if kind in ('file', 'dir-over-file', 'abs-link', 'rel-link',
                                                           'dangling', 'stale', 'stowed') else d)
            taken.add(tp)
            if kind == 'file':
                self.mkfile(T + '/' + tp, 'user:%s\n' % tp)
            elif kind == 'file-over-dir':
                self.mkfile(T + '/' + tp, 'user-file-over-dir\n')
            elif kind == 'dir':
                ensure_dir(tp)
                if r.random() < 0.6:
                    self.mkfile(T + '/' + tp + '/mine', 'user\n')
            elif kind == 'dir-over-file':
                ensure_dir(tp)
                if r.random() < 0.5:
                    self.mkfile(T + '/' + tp + '/mine', 'user\n')
            elif kind == 'abs-link':
                self.mklink(T + '/' + tp, r.choice(ABS_LINK_TEXTS))
            elif kind == 'rel-link':
                self.mklink(T + '/' + tp, rel(here, 'ext/d/outside'))
            elif kind == 'dangling':
                self.mklink(T + '/' + tp, r.choice(['nowhere', '../gone/x', 'missing-' + pkg]))
            elif kind == 'stale':
                # A link left by an earlier stow whose package entry has gone.
                self.mklink(T + '/' + tp, rel(here, pkg_path) + '.old')
            elif kind == 'stowed':
                self.mklink(T + '/' + tp, rel(here, pkg_path))
            elif kind == 'stowed-folder':
                # A folded link left by an earlier stow.
                self.mklink(T + '/' + tp, rel(here, pkg_path))
            elif kind == 'fold-with-dangling':
                # An unfolded folder holding this package's links and a dangling foreign link.
                ensure_dir(tp)
                for f in sorted(self.pkg_files[pkg]):
                    if os.path.dirname(f) == d:
                        self.mklink(T + '/' + self._target_name(f), rel(T + '/' + tp, S + '/' + pkg + '/' + f))
                self.mklink(T + '/' + tp + '/dangling', r.choice(['nowhere', '../../gone']))
            elif kind == 'other-stow':
                # A link owned by another stow dir (marked with .stow), as that stow dir would have made it.
                self.mkfile('other/.stow', '')
                self.mkdir('other/zeta/' + d)
                self.mkfile('other/zeta/' + d + '/thing', 'zeta\n')
                self.mklink(T + '/' + tp, rel(here, 'other/zeta/' + d))

    def build(self, root):
        for kind, p, arg in self.actions:
            full = os.path.join(root, p)
            if kind == 'd':
                os.makedirs(full, exist_ok=True)
            elif kind == 'f':
                os.makedirs(os.path.dirname(full), exist_ok=True)
                if os.path.lexists(full) and os.path.isdir(full) and not os.path.islink(full):
                    continue
                with open(full, 'w') as fh:
                    fh.write(arg)
            else:
                os.makedirs(os.path.dirname(full), exist_ok=True)
                if not os.path.lexists(full):
                    os.symlink(arg, full)

    # -- operations -------------------------------------------------------------------------------------------
    def gen_ops(self):
        r = self.r
        ops = []
        for _ in range(r.randint(1, 4)):
            opts = []
            dotfiles = self.dotfiles_bias if r.random() < 0.85 else not self.dotfiles_bias
            if dotfiles:
                opts.append('--dotfiles')
            if r.random() < 0.15:
                opts.append('--no-folding')
            if r.random() < 0.1:
                opts.append('--adopt')
            if r.random() < 0.1:
                opts += self._re_opt('--ignore', IGNORE_RES)
            if r.random() < 0.08:
                opts += self._re_opt('--defer', DEFER_RES)
            if r.random() < 0.08:
                opts += self._re_opt('--override', DEFER_RES)
            shape = r.choice(['S', 'S', 'S', 'D', 'D', 'R', 'DS', 'SD', 'bare'])
            actions, pkgs = [], []
            for letter in (shape if shape != 'bare' else 'x'):
                sel = r.sample(self.pkgs, r.randint(1, min(3, len(self.pkgs))))
                if r.random() < 0.03:
                    sel.append('nosuchpkg')
                pkgs += sel
                actions += ([] if letter == 'x' else ['-' + letter]) + sel
            if 'D' in shape and r.random() < 0.15:
                opts.append('-p')
            spelling = r.choice(['short'] * 6 + ['long', 'long-sep'])
            ops.append({'opts': opts, 'actions': actions, 'pkgs': pkgs, 'spelling': spelling})
        if self.plink:
            # The package link in one op (or two: stow it, then unstow or restow it).
            r2 = random.Random(self.seed * 7919 + 29)
            for letter in r2.choice([['S'], ['S', 'D'], ['S', 'R'], ['D']]):
                opts = ['--dotfiles'] if self.dotfiles_bias else []
                actions = ['-' + letter, 'plink']
                if r2.random() < 0.3:
                    actions += ['-S', r2.choice(self.pkgs)]
                ops.insert(r2.randint(0, len(ops)), {'opts': opts, 'actions': actions,
                                                     'pkgs': [a for a in actions if a[0] != '-'],
                                                     'spelling': 'short'})
        for pos, letter, dot, in_stow in self.dot_ops:
            # `stow .`: from the stow dir with only -t (the cwd is the stow dir), or with -d from elsewhere.
            ops.insert(min(pos, len(ops)), {'opts': ['--dotfiles'] if dot else [], 'actions': [letter, '.'],
                                            'pkgs': ['.'], 'spelling': 'short', 'in_stow': in_stow})
        for pos, letter, dot in self.stow2_ops:
            # An operation run from the second stow dir (-d TARGET/stow2).
            ops.insert(min(pos, len(ops)), {'opts': ['--dotfiles'] if dot and self.dotfiles_bias else [],
                                            'actions': [letter, 'zeta2'], 'pkgs': ['zeta2'],
                                            'spelling': 'short', 'stow_rel': self.target_rel + '/stow2'})
        return ops

    def _re_opt(self, name, pool):
        rx = self.r.choice(pool)
        return [name + '=' + rx] if self.r.random() < 0.5 else [name, rx]


# ---------------------------------------------------------------------------------------------------------------
# Running and comparing.

def listing(root):
    """Every entry under root, relative to it: type, link text, file contents (not mtimes)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            relp = os.path.relpath(full, root)
            if os.path.islink(full):
                out.append('%s -> %s' % (relp, os.readlink(full)))
            elif os.path.isdir(full):
                out.append(relp + '/')
            elif os.path.isfile(full):
                with open(full, 'rb') as fh:
                    data = fh.read()
                if len(data) <= 64 and b'\n' not in data[:-1]:
                    out.append('%s = %r' % (relp, data))
                else:
                    out.append('%s = sha256:%s' % (relp, hashlib.sha256(data).hexdigest()[:16]))
            else:
                out.append(relp + ' (special)')
        # os.walk does not descend into symlinked folders (followlinks=False), so links are listed as links.
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return sorted(out)


def listing_map(root):
    """Every entry under root by relative path: ('d',), ('l', text), ('f', bytes) or ('s',)."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            relp = os.path.relpath(full, root)
            if os.path.islink(full):
                out[relp] = ('l', os.readlink(full))
            elif os.path.isdir(full):
                out[relp] = ('d',)
            elif os.path.isfile(full):
                with open(full, 'rb') as fh:
                    out[relp] = ('f', fh.read())
            else:
                out[relp] = ('s',)
        dirnames[:] = [d for d in dirnames if not os.path.islink(os.path.join(dirpath, d))]
    return out


def _under(path, top):
    return path == top or path.startswith(top + '/')


def apply_plan_ops(tree, target_rel, ops):
    """tree (listing_map of the copy root) as the executor leaves it after a plan's ops, which are
    relative to the target: each op as docs/json.md defines it (an unfold makes the folder its
    contents' ops then fill; a fold removes the folder, whose contents' ops empty it, and makes the
    link; an adopt moves the file into the package and links it).  The problems found on the way."""
    problems, folded = [], []
    for op in ops:
        p = os.path.normpath(os.path.join(target_rel, op['path']))
        kind, have = op['op'], tree.get(p)
        if any(_under(p, f) and p != f for f in folded):
            continue
        if kind == 'mkdir':
            if have is not None:
                problems.append('mkdir %s over %r' % (p, have))
            tree[p] = ('d',)
        elif kind == 'link':
            if have is not None:
                problems.append('link %s over %r' % (p, have))
            tree[p] = ('l', op['text'])
        elif kind in ('unlink', 'relink', 'unfold'):
            if have != ('l', op['old_text']):
                problems.append('%s %s: found %r, not a link to %r' % (kind, p, have, op['old_text']))
            if kind == 'unlink':
                tree.pop(p, None)
            else:
                tree[p] = ('l', op['text']) if kind == 'relink' else ('d',)
        elif kind == 'rmdir':
            if have != ('d',) or any(_under(k, p) and k != p for k in tree):
                problems.append('rmdir %s: not an empty folder' % p)
            tree.pop(p, None)
        elif kind == 'fold':
            for k in [k for k in tree if _under(k, p)]:
                del tree[k]
            tree[p] = ('l', op['text'])
            folded.append(p)
        elif kind == 'adopt':
            if have is None or have[0] != 'f':
                problems.append('adopt %s: found %r, not a file' % (p, have))
            else:
                tree[os.path.normpath(os.path.join(os.path.dirname(p), op['text']))] = have
            tree[p] = ('l', op['text'])
        else:
            problems.append('unknown op %r' % kind)
    return problems


def preview_problems(grove_real, argv_c, c, target_rel, home, cwd):
    """Runs the op in copy c as `grove --json -n` (the preview), then for real (plain, as users run
    it); the preview's exit status must be the real run's, and its ops applied to the tree before
    must give the tree after (an exit other than 0 changes nothing).  The problems, and the runs."""
    before = listing_map(c)
    pr = run_tool([grove_real, '--json', '-n'], argv_c, home, cwd)
    if listing_map(c) != before:
        return ['preview: grove -n changed the tree'], pr, None
    rr = run_tool([grove_real], argv_c, home, cwd)
    after = listing_map(c)
    problems = []
    if pr['rc'] != rr['rc']:
        problems.append('preview: exit status: grove -n %s, grove %s' % (pr['rc'], rr['rc']))
    doc = None
    if pr['stdout'].strip():
        try:
            doc = json.loads(pr['stdout'])
        except ValueError:
            problems.append('preview: grove --json -n printed no JSON document')
    expect = dict(before)
    if rr['rc'] == 0:
        if doc is None:
            problems.append('preview: no plan document, and the real run succeeded')
        else:
            problems += ['preview: ' + x for x in apply_plan_ops(expect, target_rel, doc['ops'])]
            if doc['changed'] != (after != before):
                problems.append('preview: "changed" is %s, the real run %s the tree' %
                                (doc['changed'], 'changed' if after != before else 'did not change'))
    for path in sorted(set(expect) | set(after)):
        if expect.get(path) != after.get(path):
            problems.append('preview: %s: planned %r, the real run left %r' %
                            (path, expect.get(path), after.get(path)))
            if len(problems) > 12:
                break
    return problems, pr, rr


def clean_env(home):
    env = {k: v for k, v in os.environ.items()
           if k not in ('STOW_DIR', 'GROVE_STATE_DIR', 'XDG_STATE_HOME', 'XDG_CONFIG_HOME', 'XDG_DATA_HOME',
                        'PERL5LIB', 'PERL5OPT', 'NO_COLOR')}
    env['HOME'] = home
    env['LC_ALL'] = 'C'
    # grove's transaction log goes to the scenario's own HOME, never to /var/lib/grove (tests run as root).
    env['GROVE_STATE_DIR'] = os.path.join(home, 'grove-state')
    return env


def run_tool(cmd, argv, home, cwd):
    try:
        p = subprocess.run(cmd + argv, cwd=cwd, env=clean_env(home), stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        return {'rc': p.returncode, 'stderr': p.stderr.decode('utf-8', 'replace'),
                'stdout': p.stdout.decode('utf-8', 'replace')}
    except subprocess.TimeoutExpired:
        return {'rc': 'timeout', 'stderr': 'timed out after 60s', 'stdout': ''}


def run_scenario(args):
    seed, stow_cmd, grove_cmd, keep, tmpbase, preview = args
    scn = Scenario(seed)
    ops = scn.gen_ops()
    work = tempfile.mkdtemp(prefix='stowdiff-%d-' % seed, dir=tmpbase)
    res = {'seed': seed, 'ops': 0, 'diffs': [], 'known': [], 'work': work}
    try:
        a, b = os.path.join(work, 'a'), os.path.join(work, 'b')
        scn.build(a)
        shutil.copytree(a, b, symlinks=True)
        for d in ('ha', 'hb', 'ca', 'cb'):
            os.mkdir(os.path.join(work, d))
        # The preview differential: copy c, where grove runs as grove, each op first with -n.
        c = os.path.join(work, 'c')
        if preview:
            shutil.copytree(a, c, symlinks=True)
            for d in ('hc', 'cc'):
                os.mkdir(os.path.join(work, d))
        for i, op in enumerate(ops):
            def argv(root):
                d = os.path.join(root, op.get('stow_rel', scn.stow_rel))
                t = os.path.join(root, scn.target_rel)
                dt = {'short': ['-d', d, '-t', t], 'long': ['--dir=' + d, '--target=' + t],
                      'long-sep': ['--target', t, '--dir', d]}[op['spelling']]
                if op.get('in_stow'):
                    dt = ['-t', t]  # run from the stow dir, which is then the default stow dir
                return dt + op['opts'] + op['actions']

            def cwd(root, empty):
                return os.path.join(root, scn.stow_rel) if op.get('in_stow') else os.path.join(work, empty)
            res['ops'] += 1
            before = listing(b)
            sr = run_tool(stow_cmd, argv(a), os.path.join(work, 'ha'), cwd(a, 'ca'))
            gr = run_tool(grove_cmd, argv(b), os.path.join(work, 'hb'), cwd(b, 'cb'))
            la, lb = listing(a), listing(b)
            problems = []
            pr = rr = None
            if preview:
                pp, pr, rr = preview_problems(os.path.realpath(grove_cmd[0]), argv(c), c, scn.target_rel,
                                              os.path.join(work, 'hc'), os.path.join(work, 'cc'))
                problems += pp
                res['previewed'] = res.get('previewed', 0) + 1
            if (sr['rc'] == 0) != (gr['rc'] == 0) or gr['rc'] == 'timeout' or \
                    (isinstance(gr['rc'], int) and gr['rc'] < 0):
                problems.append('exit status: stow %s, grove %s' % (sr['rc'], gr['rc']))
            if la != lb:
                problems.append('trees differ')
            for d in ('ha', 'hb', 'ca', 'cb'):
                # Nothing may appear in the empty cwd; HOME may hold grove's state only.
                if d.startswith('c') and os.listdir(os.path.join(work, d)):
                    problems.append('%s: cwd not empty: %s' % (d, os.listdir(os.path.join(work, d))))
            if not problems:
                continue
            entry = {'op': i + 1, 'argv': ('(cd WORK/b/%s && ' % scn.stow_rel if op.get('in_stow') else '') +
                     'grove ' + ' '.join(shlex.quote(x) for x in argv('WORK/b')) +
                     (')' if op.get('in_stow') else ''),
                     'problems': problems, 'stow': sr, 'grove': gr,
                     'diff': ''.join(difflib.unified_diff([l + '\n' for l in la], [l + '\n' for l in lb],
                                                          'stow (WORK/a)', 'grove (WORK/b)', n=2))}
            if pr is not None and any(p.startswith('preview') for p in problems):
                entry['preview'] = pr
                entry['real'] = rr
            kind = classify_known(scn, op, sr, gr, before, la, lb, b)
            if any(p.startswith('preview') for p in problems):
                kind = None  # grove against itself: never a known difference with Stow
            if kind and gr['rc'] != 0 and lb != before:
                entry['problems'].append('grove failed (%s) but changed the tree' % kind)
                kind = None
            if kind:
                entry['kind'] = kind
                res['known'].append(entry)
            else:
                res['diffs'].append(entry)
            break  # the copies have diverged: later ops would only repeat the difference
    except Exception as exc:  # a harness bug must show, not hide the rest of the run
        res['diffs'].append({'op': res['ops'], 'argv': '(harness)', 'problems': ['harness error: %r' % exc],
                             'stow': {'stderr': ''}, 'grove': {'stderr': ''}, 'diff': ''})
    finally:
        if not keep:
            shutil.rmtree(work, ignore_errors=True)
    return res


def describe(scn):
    lines = ['layout %s: stow dir %s, target %s; packages %s' % (scn.layout, scn.stow_rel, scn.target_rel,
                                                                 ' '.join(scn.pkgs))]
    return lines


def report(res, out):
    for kind_list, label in ((res['diffs'], 'DIFFERENCE'), (res['known'], 'known')):
        for e in kind_list:
            if label == 'known':
                out.write('known [%s]: seed %d op %d: %s\n' % (e['kind'], res['seed'], e['op'], e['argv']))
                continue
            out.write('=' * 78 + '\n')
            out.write('DIFFERENCE: seed %d op %d: %s\n' % (res['seed'], e['op'], e['argv']))
            for p in e['problems']:
                out.write('  %s\n' % p)
            for needle, hint in STOW_DIES_HINTS.items():
                if e['stow'].get('rc') not in (0, None) and needle in e['stow']['stderr']:
                    out.write('  hint: %s\n' % hint)
            for tool in ('stow', 'grove'):
                err = e[tool]['stderr'].strip()
                if err:
                    out.write('  %s stderr:\n' % tool)
                    for line in err.splitlines()[:15]:
                        out.write('    | %s\n' % line)
            if e.get('preview'):
                out.write('  grove --json -n: exit %s\n' % e['preview']['rc'])
                for line in (e['preview']['stdout'] + e['preview']['stderr']).strip().splitlines()[:15]:
                    out.write('    | %s\n' % line)
            if e['diff']:
                out.write(e['diff'])
            out.write('  replay: stowdiff.py --only %d --keep ...\n' % res['seed'])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--stow-cmd', required=True, help='command that runs Stow 2.4.1 (shell words)')
    ap.add_argument('--grove', required=True, help='grove binary (or a wrapper) to test')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--count', type=int, default=300)
    ap.add_argument('--only', type=int, help='replay one scenario seed')
    ap.add_argument('--keep', action='store_true', help='keep the scenario dirs (printed)')
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--show', action='store_true', help='print each scenario and its ops')
    ap.add_argument('--preview-every', type=int, default=0,
                    help='also compare grove -n with the real run in every Nth scenario (0: none)')
    ns = ap.parse_args()

    stow_cmd = shlex.split(ns.stow_cmd)
    grove_cmd = [os.path.abspath(ns.grove)]
    seeds = [ns.only] if ns.only is not None else list(range(ns.seed, ns.seed + ns.count))
    tmpbase = tempfile.mkdtemp(prefix='stowdiff-')
    t0 = time.time()
    every = ns.preview_every
    work = [(s, stow_cmd, grove_cmd, ns.keep, tmpbase, every > 0 and (s % every == 0 or ns.only is not None))
            for s in seeds]
    npreviewed = 0
    nops = ndiff = 0
    known = {}
    out = sys.stdout
    try:
        if ns.jobs > 1 and len(seeds) > 1:
            pool = multiprocessing.Pool(ns.jobs)
            results = pool.imap(run_scenario, work)
        else:
            pool = None
            results = map(run_scenario, work)
        for res in results:
            if ns.show:
                scn = Scenario(res['seed'])
                out.write('seed %d: %s\n' % (res['seed'], describe(scn)[0]))
                for kind, p, arg in scn.actions:
                    out.write('  %s %s%s\n' % (kind, p, '' if arg is None else ' ' + repr(arg)))
                for op in scn.gen_ops():
                    out.write('  op: %s\n' % ' '.join(op['opts'] + op['actions']))
            nops += res['ops']
            npreviewed += res.get('previewed', 0)
            ndiff += len(res['diffs'])
            for e in res['known']:
                known[e['kind']] = known.get(e['kind'], 0) + 1
            report(res, out)
            if ns.keep:
                out.write('seed %d kept in %s\n' % (res['seed'], res['work']))
            out.flush()
        if pool:
            pool.close()
            pool.join()
    finally:
        if not ns.keep:
            shutil.rmtree(tmpbase, ignore_errors=True)
    nknown = sum(known.values())
    if known:
        out.write('known differences by kind:\n')
        for k in KNOWN_KINDS:
            if k in known:
                out.write('  %-24s %4d  (%s)\n' % (k, known[k], KNOWN_KINDS[k]))
    out.write('time: %.1fs\n' % (time.time() - t0))
    if every:
        out.write('preview: %d ops run with grove -n first and compared with the real run\n' % npreviewed)
    out.write('diff: %d scenarios, %d ops, %d differences, %d known\n' % (len(seeds), nops, ndiff, nknown))
    return 1 if ndiff else 0


if __name__ == '__main__':
    sys.exit(main())
