import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every relative link in README.md and docs/*.md resolves: the file or folder exists, and a `#fragment` names a
 * heading of the target page (GitHub's anchor rule). Links inside code (fenced blocks, inline code) and absolute URLs
 * are not checked.
 */
const ROOT = resolve(import.meta.dirname, '..');
const PAGES = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

/** The page's text without fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  return markdown.replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const m of markdown.replace(/^```[\s\S]*?^```$/gm, '').matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const text = m[1].replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/[`*_]/g, (c) => (c === '_' ? '_' : ''));
    const base = text.toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** Every `[text](target)` and `![alt](target)` of the page's prose, with the target as written. */
function links(markdown: string): string[] {
  return [...prose(markdown).matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?: "[^"]*")?\)/g)].map((m) => m[1]);
}

describe('documentation links', () => {
  it('finds the pages', () => {
    expect(PAGES).toContain('README.md');
    expect(PAGES.length).toBeGreaterThan(10);
  });

  for (const page of PAGES) {
    it(`${page}: every relative link resolves`, () => {
      const text = readFileSync(join(ROOT, page), 'utf8');
      const broken: string[] = [];
      for (const target of links(text)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // http:, https:, mailto:
        const [path, fragment] = target.split('#', 2);
        const file = path === '' ? join(ROOT, page) : resolve(dirname(join(ROOT, page)), decodeURIComponent(path));
        if (!existsSync(file)) {
          broken.push(`${target}: no ${relative(ROOT, file)}`);
          continue;
        }
        if (fragment !== undefined && file.endsWith('.md') && statSync(file).isFile() && !anchors(readFileSync(file, 'utf8')).has(fragment)) {
          broken.push(`${target}: no heading #${fragment} in ${relative(ROOT, file)}`);
        }
      }
      expect(broken).toEqual([]);
    });
  }
});
