// A QR code drawn locally on a canvas (uqr computes the matrix; nothing leaves the browser).
import { useEffect, useRef } from "preact/hooks";
import { encode } from "uqr";

export function QRCode({ text, label }: { text: string; label: string }) {
  const ref = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    const qr = encode(text, { ecc: "M", border: 4 });
    const scale = 5;
    const c = ref.current!;
    c.width = c.height = qr.size * scale;
    const g = c.getContext("2d")!;
    g.fillStyle = "#fff";
    g.fillRect(0, 0, c.width, c.height);
    g.fillStyle = "#000";
    qr.data.forEach((row, y) => row.forEach((on, x) => on && g.fillRect(x * scale, y * scale, scale, scale)));
  }, [text]);
  return <canvas ref={ref} class="qr" role="img" aria-label={label} />;
}
