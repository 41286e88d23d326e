/**
 * Headless Chromium for the UI tests (Debian's `chromium` through puppeteer-core): where it is, whether it can
 * run, text waits that also look inside the UI's iframes, and screenshots CI logs point to.
 */
import { accessSync, constants, mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import puppeteer, { type Browser, type Frame, type Page } from 'puppeteer-core';
import { eventually } from '../helpers/eventually.js';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH?.trim() || '/usr/bin/chromium';
export const SCREENSHOT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '../../.cache/screenshots');

/** Why the browser cannot run here, or undefined when it can. */
export function chromiumUnavailable(path = CHROMIUM_PATH): string | undefined {
  try {
    accessSync(path, constants.X_OK);
    return undefined;
  } catch {
    return `no Chromium executable at ${path} (install it with: apt-get install chromium, or set CHROMIUM_PATH)`;
  }
}

export function launchChromium(): Promise<Browser> {
  return puppeteer.launch({
    executablePath: CHROMIUM_PATH,
    args: ['--no-sandbox', '--headless=new'],
    defaultViewport: { width: 1400, height: 1000 },
  });
}

/**
 * The frame (the page itself or one of its iframes) showing `text`. The UI renders markdown, such as a
 * workflow's current details, in iframes of its own, which a selector on the page does not reach.
 */
export async function waitForFrameWithText(page: Page, text: string, timeoutMs = 30_000): Promise<Frame> {
  const find = async (): Promise<Frame | undefined> => {
    for (const frame of page.frames()) {
      // A frame can go away between listing and asking while the UI re-renders: puppeteer then throws before it
      // returns a promise, so a rejection handler alone does not catch it.
      if (frame.detached) continue;
      try {
        if (await frame.$(textSelector(text))) return frame;
        // The selector has missed text the frame showed (seen once in CI, screenshot and all): its rendered text,
        // spaces collapsed, is asked too.
        const shown = await frame.$eval('body', (body) => body.innerText);
        if (shown.replace(/\s+/g, ' ').includes(text)) return frame;
      } catch {
        // Detached meanwhile: the next round lists the frames again.
      }
    }
    return undefined;
  };
  const frame = await eventually(find, (f) => f !== undefined, {
    timeoutMs,
    intervalMs: 250,
    what: `a frame of ${page.url()} showing "${text}"`,
  });
  return frame!;
}

/** Puppeteer's selector for the element showing `text`, quoted so brackets and quotes in it are literal. */
export function textSelector(text: string): string {
  return `::-p-text(${JSON.stringify(text)})`;
}

/** Full-page screenshot under .cache/screenshots; the path is printed so a CI log leads to it. */
export async function screenshot(page: Page, fileName: `${string}.png`): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = resolve(SCREENSHOT_DIR, fileName) as `${string}.png`;
  await page.screenshot({ path, fullPage: true });
  console.log(`screenshot: ${path}`);
  return path;
}
