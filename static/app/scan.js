// Reading a parcel's barcode or QR with the phone's camera (issue 47). The browser's own
// BarcodeDetector where it has one; else the vendored ZXing (static/vendor/zxing-library, pinned
// @zxing/library 0.23.0), fetched the first time it is needed. Every frame, from the camera or
// from a picture, goes through decode(): the one path the app and its tests use.
const ZXING = "/static/vendor/zxing-library/zxing.min.js";
let detector = null;
let zxing = null;

function loadZxing() {
  if (window.ZXing) { return Promise.resolve(window.ZXing); }
  zxing = zxing || new Promise((resolve, reject) => {
    const script = document.createElement("script");
    script.src = ZXING;
    script.onload = () => resolve(window.ZXing);
    script.onerror = () => { zxing = null; reject(new Error("decoder unavailable")); };
    document.head.append(script);
  });
  return zxing;
}

function nativeDetector() {
  if (!("BarcodeDetector" in window)) { return null; }
  try { detector = detector || new window.BarcodeDetector(); } catch (error) { detector = null; }
  return detector;
}

// A canvas holding the frame of ``source`` (a canvas, an <img>, a <video> or an ImageBitmap).
function frameOf(source) {
  if (source instanceof HTMLCanvasElement) { return source; }
  const width = source.videoWidth || source.naturalWidth || source.width;
  const height = source.videoHeight || source.naturalHeight || source.height;
  const canvas = document.createElement("canvas");
  canvas.width = width; canvas.height = height;
  canvas.getContext("2d", {willReadFrequently: true}).drawImage(source, 0, 0, width, height);
  return canvas;
}

// The text of the first barcode or QR in ``source``, or null when the frame shows none.
// ``native: false`` skips the browser's detector (a test of the fallback on a browser that has one).
export async function decode(source, {native = true} = {}) {
  const found = native ? nativeDetector() : null;
  if (found) {
    try {
      const codes = await found.detect(source);
      if (codes.length) { return codes[0].rawValue; }
    } catch (error) { /* a format or source it cannot read: ZXing tries */ }
  }
  const ZXing = await loadZxing();
  const frame = frameOf(source);
  if (!frame.width || !frame.height) { return null; }
  try {
    const bitmap = new ZXing.BinaryBitmap(new ZXing.HybridBinarizer(new ZXing.HTMLCanvasElementLuminanceSource(frame)));
    const hints = new Map([[ZXing.DecodeHintType.TRY_HARDER, true]]);
    return new ZXing.MultiFormatReader().decode(bitmap, hints).getText();
  } catch (error) {
    return null;  // NotFoundException and its kin: nothing readable in this frame
  }
}

// The back camera into ``video``, each code read passed to ``onCode`` (a frame every 250 ms);
// answers a function that stops the camera.
export async function startScanning(video, onCode) {
  const stream = await navigator.mediaDevices.getUserMedia({video: {facingMode: "environment"}, audio: false});
  video.srcObject = stream;
  await video.play();
  let stopped = false;
  const look = async () => {
    if (stopped) { return; }
    if (video.readyState >= 2) {
      const text = await decode(video);
      if (text && !stopped) { onCode(text); }
    }
    setTimeout(look, 250);
  };
  look();
  return () => { stopped = true; stream.getTracks().forEach((track) => track.stop()); video.srcObject = null; };
}
