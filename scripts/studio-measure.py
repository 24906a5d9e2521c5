#!/usr/bin/env python3
"""Measures Trove Studio in headless Chromium on a big file: time to the first
grid page, time per scroll page (jumps across the whole table), the server's
memory while scrolling, and the delay from another process's commit to the
grid showing it.

usage: studio-measure.py FILE TYPE PRIMARYKEY_OF_A_ROW PROPERTY
  (FILE is served by a `trove studio` this script starts from .build/release;
  the row named by its primary key gets PROPERTY set by `trove set`)
Needs selenium (PyPI) and chromium/chromedriver (make deps-browser).
"""
import random, statistics, subprocess, sys, threading, time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

file, type_name, key, prop = sys.argv[1:5]
trove = ".build/release/trove"
server = subprocess.Popen([trove, "studio", file, "--port", "0", "--trust"], stdout=subprocess.PIPE, text=True)
address = server.stdout.readline().split(": ", 1)[1].strip()

def memory():
    fields = dict(line.split(":", 1) for line in open(f"/proc/{server.pid}/status"))
    return (int(fields["VmRSS"].split()[0]) // 1024, int(fields["VmHWM"].split()[0]) // 1024,
            int(fields["RssAnon"].split()[0]) // 1024)

options = webdriver.ChromeOptions()
for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1400,900"]:
    options.add_argument(argument)
browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
browser.set_script_timeout(60)
try:
    print(f"server memory before the page: RSS {memory()[0]} MB")
    first_page = """
        const done = arguments[arguments.length - 1];
        (function check() {
          const row = document.querySelector('.row[data-key]');
          if (row) done([performance.now(), window.troveStudioStarted, window.troveStudioFirstPage]);
          else requestAnimationFrame(check);
        })();"""
    for visit in ["first visit", "reload"]:
        browser.get(address)
        drawn, started, fetched = browser.execute_async_script(first_page)
        print(f"{visit}: first grid page drawn {drawn:.0f} ms after navigation start, {drawn - started:.0f} ms after "
              f"the script started (its API call: {fetched:.1f} ms)")
    total = browser.execute_script("return state.total")
    print(f"{total} {type_name} objects")

    jump = """
        const [target, done] = [arguments[0], arguments[arguments.length - 1]];
        const scroll = document.getElementById('grid-scroll');
        const start = performance.now();
        scroll.scrollTop = target * 30;
        (function check() {
          const row = document.querySelector(`.row[data-index="${target}"]`);
          if (row && row.dataset.key) done(performance.now() - start); else requestAnimationFrame(check);
        })();"""
    random.seed(1)
    # Jumps across the whole table, each to rows no page holds yet.
    targets = [int(i * (total - 40) / 200) for i in range(1, 201)]
    random.shuffle(targets)
    times, peak, peakAnon = [], 0, 0
    for target in targets:
        times.append(browser.execute_async_script(jump, target))
        peak = max(peak, memory()[0])
        peakAnon = max(peakAnon, memory()[2])
    times.sort()
    print(f"scroll page (200 jumps across the table): median {statistics.median(times):.0f} ms, "
          f"90th percentile {times[179]:.0f} ms, worst {times[-1]:.0f} ms")
    # Then a scroll a page at a time through 100 pages.
    steps = []
    for page in range(100):
        steps.append(browser.execute_async_script(jump, 400_000 + page * 100 + 50))
    steps.sort()
    print(f"scroll page (100 pages in a row): median {statistics.median(steps):.0f} ms, worst {steps[-1]:.0f} ms")
    rss, hwm, anon = memory()
    print(f"server memory while scrolling: RSS at most {peak} MB, of which the server's own (not the file's mapped pages) "
          f"at most {peakAnon} MB (now {rss} MB / {anon} MB own, high-water mark {hwm} MB)")

    # Live: back at the top; another process changes the first row's property.
    browser.execute_async_script(jump, 0)
    delays = []
    for attempt in range(5):
        text = f"live {attempt} {time.time()}"
        result = {}
        def change():
            time.sleep(0.3)
            result["start"] = time.time()
            subprocess.run([trove, "set", file, type_name, key, prop, text], check=True, capture_output=True)
            result["end"] = time.time()
        worker = threading.Thread(target=change)
        worker.start()
        seen = browser.execute_async_script("""
            const [text, done] = [arguments[0], arguments[arguments.length - 1]];
            (function check() {
              if (Array.from(document.querySelectorAll('#grid-space .cell')).some(c => c.textContent === text)) done(Date.now());
              else setTimeout(check, 2);
            })();""", text)
        worker.join()
        delays.append((seen / 1000 - result["end"], seen / 1000 - result["start"]))
    after = statistics.median(d[0] for d in delays) * 1000
    whole = statistics.median(d[1] for d in delays) * 1000
    print(f"live update: the grid shows another process's commit a median {after:.0f} ms after `trove set` exits "
          f"({whole:.0f} ms after it starts; 5 commits)")
finally:
    browser.quit()
    server.terminate()
