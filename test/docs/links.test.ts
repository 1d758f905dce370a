import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import GithubSlugger from 'github-slugger'
import { lexer, walkTokens, type Token } from 'marked'
import t from 'tap'

/*
 * The README and docs/ link to each other and into the repository; a moved file or a renamed
 * heading must fail the suite, not a reader. Links are read with marked's lexer (so a link in a
 * code block is no link, and a bare URL in prose is one, as GitHub renders them); anchors are
 * GitHub's heading ids, made by github-slugger from each heading's text.
 */

// The test runs from dist/test/docs/; the repository root is three levels up.
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..')
const README_MAX_LINES = 300

/** A heading's text as GitHub shows it: inline code, emphasis and links reduced to their words. */
function plainText(tokens: Token[]): string {
  return tokens
    .map((token) => {
      if ('tokens' in token && Array.isArray(token.tokens) && token.tokens.length > 0) return plainText(token.tokens)
      return 'text' in token && typeof token.text === 'string' ? token.text : ''
    })
    .join('')
}

/** The anchors GitHub gives a markdown text's headings, duplicates numbered as it numbers them. */
function anchorsIn(text: string): Set<string> {
  const slugger = new GithubSlugger()
  const anchors = new Set<string>()
  walkTokens(lexer(text), (token) => {
    if (token.type === 'heading') anchors.add(slugger.slug(plainText(token.tokens ?? [])))
  })
  return anchors
}

const anchorCache = new Map<string, Set<string>>()
function anchorsOf(path: string): Set<string> {
  let anchors = anchorCache.get(path)
  if (anchors === undefined) anchorCache.set(path, (anchors = anchorsIn(readFileSync(path, 'utf8'))))
  return anchors
}

/** Every link and image target of a markdown text, in order. */
function linksOf(text: string): string[] {
  const hrefs: string[] = []
  walkTokens(lexer(text), (token) => {
    if ((token.type === 'link' || token.type === 'image') && typeof token.href === 'string') hrefs.push(token.href)
  })
  return hrefs
}

const SCHEME = /^[a-z][a-z0-9+.-]*:/i

/**
 * What is wrong with the links of `text`, read as the file at `path`: a relative target that is
 * missing, an anchor no heading of its file has, and (when `relativeOnly`) any link that leaves
 * the repository.
 */
function linkProblems(path: string, text: string, { relativeOnly }: { relativeOnly: boolean }): string[] {
  const problems: string[] = []
  const name = relative(ROOT, path)
  for (const href of linksOf(text)) {
    if (SCHEME.test(href) || href.startsWith('//') || href.startsWith('/')) {
      if (relativeOnly) problems.push(`${name}: ${href} leaves the repository; link a file in it instead`)
      continue
    }
    const hash = href.indexOf('#')
    const file = decodeURIComponent(hash === -1 ? href : href.slice(0, hash))
    const anchor = hash === -1 ? undefined : decodeURIComponent(href.slice(hash + 1))
    if (file === '') {
      if (anchor !== undefined && !anchorsIn(text).has(anchor)) problems.push(`${name}: #${anchor} names no heading of this file`)
      continue
    }
    const target = join(dirname(path), file)
    if (!existsSync(target)) {
      problems.push(`${name}: ${href} names ${relative(ROOT, target)}, which does not exist`)
      continue
    }
    if (anchor !== undefined && target.endsWith('.md') && statSync(target).isFile() && !anchorsOf(target).has(anchor)) {
      problems.push(`${name}: ${href} names #${anchor}, which no heading of ${relative(ROOT, target)} has`)
    }
  }
  return problems
}

const readmePath = join(ROOT, 'README.md')
const docsDir = join(ROOT, 'docs')
const docPaths = readdirSync(docsDir)
  .filter((entry) => entry.endsWith('.md'))
  .map((entry) => join(docsDir, entry))

t.test('the checker finds what it is meant to find', async (t) => {
  const fake = join(docsDir, 'fake.md')
  const text = '# Here\n\n[a](missing.md) [b](contracts.md#no-such-heading) [c](#here) [d](#there) [e](contracts.md) [f](https://example.com)\n\n```sh\n[g](nowhere.md)\n```\n'
  t.same(linkProblems(fake, text, { relativeOnly: false }), [
    'docs/fake.md: missing.md names docs/missing.md, which does not exist',
    'docs/fake.md: contracts.md#no-such-heading names #no-such-heading, which no heading of docs/contracts.md has',
    'docs/fake.md: #there names no heading of this file',
  ], 'a missing file, a missing anchor of another file and of its own; a link in code is no link')
  t.same(linkProblems(readmePath, 'See http://example.com and [x](https://example.com) and `http://localhost:3000`.\n', { relativeOnly: true }), [
    'README.md: http://example.com leaves the repository; link a file in it instead',
    'README.md: https://example.com leaves the repository; link a file in it instead',
  ], 'in the README a bare URL in prose and a web link are refused; one in code is no link')
  t.ok(anchorsOf(join(docsDir, 'contracts.md')).has('1-the-public-interface'), 'GitHub anchors: lower case, punctuation dropped, spaces as hyphens')
})

t.test('README: at most 300 lines, links only into this repository, every link resolves', async (t) => {
  const text = readFileSync(readmePath, 'utf8')
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0)
  t.ok(lines <= README_MAX_LINES, `README.md has ${lines} lines (at most ${README_MAX_LINES})`)
  t.same(linkProblems(readmePath, text, { relativeOnly: true }), [], 'no broken or outside link')
  t.ok(linksOf(text).length >= 10, 'the README does link into docs/')
})

t.test('README: the test command CI runs is there, exactly', async (t) => {
  t.match(readFileSync(readmePath, 'utf8'), /^npm install && npm test(\s|$)/m, '.ci/run runs `npm install && npm test` as the README gives it')
})

t.test('README links every page of docs/', async (t) => {
  const targets = new Set(linksOf(readFileSync(readmePath, 'utf8')).map((href) => href.split('#')[0]))
  for (const path of docPaths) t.ok(targets.has(relative(ROOT, path)), `README links ${relative(ROOT, path)}`)
})

t.test('docs/*.md: every relative link and anchor resolves', async (t) => {
  t.ok(docPaths.length >= 10, 'the manual has its pages')
  for (const path of docPaths) t.same(linkProblems(path, readFileSync(path, 'utf8'), { relativeOnly: false }), [], relative(ROOT, path))
})
