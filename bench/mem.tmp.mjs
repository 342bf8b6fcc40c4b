setTimeout(() => {
  const m = process.memoryUsage();
  const mb = (n) => (n / 1048576).toFixed(0);
  console.error(`MEM rss ${mb(m.rss)} heapTotal ${mb(m.heapTotal)} heapUsed ${mb(m.heapUsed)} external ${mb(m.external)} arrayBuffers ${mb(m.arrayBuffers)} sourcemaps=${process.sourceMapsEnabled}`);
  process.exit(0);
}, 9000).unref?.();
