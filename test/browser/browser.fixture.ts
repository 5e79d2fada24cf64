import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, resolve } from 'node:path';
import { chromium, type Browser, type Frame, type FrameLocator, type Page } from 'playwright-core';

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

if (!existsSync(CHROMIUM)) {
  throw new Error(`No chromium at ${CHROMIUM}: install it (apt-get install -y chromium) or set CHROMIUM_PATH`);
}

/** Headless Debian Chromium through playwright-core. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

/**
 * Where a screenshot goes: docs/<name> (the README's images) with UPDATE_SCREENSHOTS=1, else the temp
 * folder, so that a test run leaves the work tree clean.
 */
export function screenshotPath(name: string): string {
  const path =
    process.env['UPDATE_SCREENSHOTS'] === '1'
      ? resolve(process.cwd(), 'docs', name)
      : resolve(tmpdir(), `nestjs-payments-${name}`);
  mkdirSync(dirname(path), { recursive: true });
  return path;
}

/** Text a person sees on the page and in its frames (hidden elements excluded). */
export async function visibleText(page: Page): Promise<string> {
  const texts = await Promise.all(
    page.frames().map((frame: Frame) =>
      frame
        .locator('body')
        .innerText()
        .catch(() => ''),
    ),
  );
  return texts.join('\n');
}

/** Every state name of the reference, none of which a shopper should read. */
export const STATE_NAMES = [
  'succeeded',
  'errored_authorization',
  'errored_capture',
  'errored_sale',
  'requires_payment_method',
  'requires_confirmation',
  'requires_capture',
  'requires_review',
  'payment_intent',
  'setup_intent',
];

export const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;

/** A card number the simulator answers with `requires_capture` (the order waits for one more step). */
export const ACTION_CARD = '4000 0000 0000 3220';

/** Waits for the form to have the embed token (its Pay button enables), types `card` if given, presses `button`. */
export async function pressInForm(
  page: Page,
  form: FrameLocator,
  sectionId: string,
  button: string,
  card?: string,
): Promise<void> {
  await page.locator(`#${sectionId}[data-stage="token-sent"]`).waitFor();
  if (card !== undefined) await form.locator('#card-number').fill(card);
  // Playwright waits for the button to be enabled: the form enables it once the token arrived.
  await form.locator(button).click();
  // Confirmed: the form told the page (which may already have settled and removed the form).
  await page.locator(`#${sectionId}:not([data-stage="token-sent"])`).waitFor();
}
