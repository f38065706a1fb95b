// The stand-ins' loop: kicks during a pass coalesce into one more pass, never run two at once.
import { KickLoop } from './kick.js';

function gate(): { wait: Promise<void>; open: () => void } {
  let open = () => {};
  const wait = new Promise<void>((r) => (open = r));
  return { wait, open };
}

describe('KickLoop', () => {
  it('runs one pass a kick when idle', async () => {
    let passes = 0;
    const loop = new KickLoop(() => {
      passes++;
      return Promise.resolve();
    });
    loop.kick();
    await loop.idle();
    loop.kick();
    await loop.idle();
    expect(passes).toBe(2);
  });

  it('folds kicks during a pass into one more pass, one at a time', async () => {
    const first = gate();
    let passes = 0;
    let concurrent = 0;
    let most = 0;
    const loop = new KickLoop(async () => {
      passes++;
      most = Math.max(most, ++concurrent);
      if (passes === 1) await first.wait;
      concurrent--;
    });
    loop.kick();
    for (let i = 0; i < 5; i++) loop.kick();
    first.open();
    await loop.idle();
    expect(passes).toBe(2);
    expect(most).toBe(1);
  });
});
