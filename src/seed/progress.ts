/** Progress of a long job on stderr: a redrawn bar on a terminal, a line every few seconds (and at the end) otherwise. */
export interface Progress {
  update(done: number, detail?: string): void;
  finish(detail?: string): void;
}

export function progressBar(label: string, total: number, stream: NodeJS.WriteStream = process.stderr): Progress {
  const tty = Boolean(stream.isTTY);
  const width = 30;
  let last = 0;
  let lastLine = -Infinity;
  const render = (done: number, detail: string) => {
    const ratio = total > 0 ? Math.min(1, done / total) : 1;
    const percent = `${Math.floor(ratio * 100)}%`.padStart(4);
    const filled = Math.round(ratio * width);
    return tty
      ? `\r${label} [${"█".repeat(filled)}${"░".repeat(width - filled)}] ${percent} ${done}/${total}${detail ? ` ${detail}` : ""}\x1b[K`
      : `${label}: ${done}/${total} (${percent.trim()})${detail ? ` ${detail}` : ""}\n`;
  };
  return {
    update(done, detail = "") {
      const now = Date.now();
      if (now - (tty ? last : lastLine) < (tty ? 80 : 2000)) return;
      if (tty) last = now;
      else lastLine = now;
      stream.write(render(done, detail));
    },
    finish(detail = "") {
      stream.write(render(total, detail) + (tty ? "\n" : ""));
    },
  };
}

/** A progress that says nothing (the first run seeds quietly). */
export const silentProgress: Progress = { update() {}, finish() {} };
