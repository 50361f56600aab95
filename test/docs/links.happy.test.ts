import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import t from 'tap';
import { ROOT } from '../helpers/platform.ts';

// Every relative link of the README and docs/ leads somewhere: the file exists and, for a Markdown file, so does the
// heading its #anchor names (GitHub's anchors). Moving a section between documents breaks no reader's link.

const documents = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** The document without its fenced code blocks, where a `#` line is no heading. */
const unfenced = (text: string): string => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');

/** The document without its code, fenced or inline, where brackets are not links. */
const prose = (text: string): string => unfenced(text).replace(/`[^`\n]*`/g, '');

/** GitHub's anchors of a Markdown file's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const found = new Set<string>();
  for (const [, heading] of unfenced(text).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = heading!
      .replace(/`/g, '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const n = seen.get(slug) ?? 0;
    seen.set(slug, n + 1);
    found.add(n === 0 ? slug : `${slug}-${n}`);
  }
  return found;
}

for (const doc of documents) {
  t.test(`${doc}: every relative link resolves`, async (t) => {
    const text = readFileSync(join(ROOT, doc), 'utf8');
    const links = [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!);
    for (const link of links) {
      if (/^[a-z]+:/i.test(link)) continue;
      const [path, anchor] = link.split('#') as [string, string | undefined];
      const target = path === '' ? join(ROOT, doc) : join(ROOT, dirname(doc), path);
      const shown = relative(ROOT, target);
      if (!t.ok(existsSync(target), `${link}: ${shown} exists`)) continue;
      if (anchor !== undefined && statSync(target).isFile() && target.endsWith('.md')) {
        t.ok(anchors(readFileSync(target, 'utf8')).has(anchor), `${link}: ${shown} has a heading #${anchor}`);
      }
    }
  });
}
