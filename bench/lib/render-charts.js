/**
 * Draws chart.js charts to PNG files in headless Chromium (Debian's /usr/bin/chromium through
 * playwright-core, or CHROMIUM_PATH; nothing is downloaded). Used by bench/charts.js and
 * bench/scale-charts.js. Each chart: { file (from the repository root), config: { type, data, title,
 * yTitle, xTitle?, logY?, logX? } }; `machine` is the subtitle of every chart.
 */
import { readFileSync } from 'node:fs';
import { chromium } from 'playwright-core';

const root = new URL('../..', import.meta.url).pathname;

export async function renderCharts(charts, machine) {
  const chartJs = readFileSync(`${root}node_modules/chart.js/dist/chart.umd.js`, 'utf8');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 900, height: 480 } });
    for (const { file, config } of charts) {
      await page.setContent(`<!doctype html><html><body style="margin:0;background:#fff">
        <canvas id="c" width="900" height="480"></canvas></body></html>`);
      await page.addScriptTag({ content: chartJs });
      await page.evaluate(
        ({ config, machine }) => {
          const { type, data, title, yTitle, xTitle, logY, logX } = config;
          // eslint-disable-next-line no-undef
          new Chart(document.getElementById('c'), {
            type,
            data,
            options: {
              animation: false,
              responsive: false,
              plugins: {
                title: { display: true, text: title, font: { size: 16 } },
                subtitle: { display: true, text: machine },
              },
              scales: {
                y: {
                  type: logY ? 'logarithmic' : 'linear',
                  beginAtZero: !logY,
                  title: { display: true, text: yTitle },
                },
                ...(logX ? { x: { type: 'logarithmic', title: { display: true, text: xTitle } } } : {}),
              },
            },
          });
        },
        { config, machine },
      );
      await page.locator('#c').screenshot({ path: `${root}${file}` });
      console.log(`Wrote ${file}`);
    }
  } finally {
    await browser.close();
  }
}
