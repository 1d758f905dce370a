import { execFileSync } from 'node:child_process'
import { existsSync, mkdirSync } from 'node:fs'
import path from 'node:path'
import { chromium, type Browser, type Locator, type Page, type Response } from 'playwright-core'
import type { Test } from 'tap'
import { projectRoot } from './processes.js'
import { errorMessage } from '../../shared/errors/error-message.js'

const CHROMIUM = '/usr/bin/chromium'

export const screenshotDir = path.join(projectRoot, 'test-output', 'console')

// The machine's network is closed: no QUIC, no component or sync traffic, nothing in the background.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/**
 * The Debian `chromium` the browser tests drive: installed with apt-get when missing (through
 * sudo unless root; `apt-get update` only when the first install fails; .ci/run installs it first). Its output goes to
 * stderr, never into the TAP stream on stdout.
 */
export function ensureChromium(): string {
  if (existsSync(CHROMIUM)) return CHROMIUM
  const root = process.getuid?.() === 0
  // Two browser test files run at once on a fresh machine: the second apt-get waits for the first's
  // dpkg lock (then finds chromium installed) instead of failing at once.
  const run = (args: string[]) => {
    const apt = ['apt-get', '-o', 'DPkg::Lock::Timeout=600', ...args]
    const [command, ...rest] = root ? ['env', 'DEBIAN_FRONTEND=noninteractive', ...apt] : ['sudo', 'env', 'DEBIAN_FRONTEND=noninteractive', ...apt]
    execFileSync(command, rest, { stdio: ['ignore', 2, 2], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } })
  }
  const install = ['install', '-y', '--no-install-recommends', 'chromium']
  try {
    run(install)
  } catch {
    try {
      run(['update'])
      run(install)
    } catch (err) {
      throw new Error(`${CHROMIUM} is missing and could not be installed with apt-get (${errorMessage(err)}); install the Debian package chromium to run the browser tests`)
    }
  }
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is still missing after apt-get install chromium; install the Debian package chromium to run the browser tests`)
  return CHROMIUM
}

/** A headless Chromium for one test, closed when the test ends. */
export async function openBrowser(t: Test): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: ensureChromium(), args: CHROMIUM_ARGS })
  t.teardown(() => browser.close())
  return browser
}

/** A full-page screenshot at `test-output/console/<name>.png`; returns its path. */
export async function screenshot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true })
  const file = path.join(screenshotDir, `${name}.png`)
  await capture(page, file, { fullPage: true })
  return file
}

/**
 * A picture of the page (or one part of it) at `file`, for the docs, not a check: Chromium on a
 * loaded machine now and then answers "Unable to capture screenshot" (a CI run of 2026-11-27),
 * so a capture is tried up to three times.
 */
export async function capture(target: Page | Locator, file: string, options: { fullPage?: boolean } = {}): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await target.screenshot({ path: file, ...options })
      return
    } catch (err) {
      if (attempt === 3) throw err
    }
  }
}

/**
 * Clicks a form's button (or a link) and waits for the page it leads to: the final answer of
 * the navigation (after any 303) and the new document's load event. Returns that answer.
 */
export async function submit(page: Page, action: Locator): Promise<Response> {
  const answered = page.waitForResponse((response) => response.request().isNavigationRequest() && response.frame() === page.mainFrame()
    && (response.status() < 300 || response.status() >= 400))
  const loaded = page.waitForEvent('load')
  await action.click()
  const [response] = await Promise.all([answered, loaded])
  return response
}
