"""Code 39 barcodes drawn with Pillow, for the courier app's scan tests: an encoder of its own
(the published Code 39 table), independent of the decoder the app vendors, so a test proves the
app reads a real parcel label rather than its own library's output."""

from __future__ import annotations

import base64
import io

from PIL import Image

# Each character: nine elements, bar and space in turn from a bar; 1 wide, 0 narrow.
PATTERNS = {
    "0": "000110100", "1": "100100001", "2": "001100001", "3": "101100000", "4": "000110001",
    "5": "100110000", "6": "001110000", "7": "000100101", "8": "100100100", "9": "001100100",
    "A": "100001001", "B": "001001001", "C": "101001000", "D": "000011001", "E": "100011000",
    "F": "001011000", "G": "000001101", "H": "100001100", "I": "001001100", "J": "000011100",
    "K": "100000011", "L": "001000011", "M": "101000010", "N": "000010011", "O": "100010010",
    "P": "001010010", "Q": "000000111", "R": "100000110", "S": "001000110", "T": "000010110",
    "U": "110000001", "V": "011000001", "W": "111000000", "X": "010010001", "Y": "110010000",
    "Z": "011010000", "-": "010000101", "*": "010010100",
}  # fmt: skip


def code39(text: str, *, narrow: int = 3, wide: int = 8, height: int = 120, quiet: int = 40) -> Image.Image:
    """``text`` (digits, capitals, '-') as a Code 39 barcode between its * start and stop."""
    elements: list[tuple[int, bool]] = []
    for character in f"*{text}*":
        for index, bit in enumerate(PATTERNS[character]):
            elements.append((wide if bit == "1" else narrow, index % 2 == 0))
        elements.append((narrow, False))  # the gap between characters
    image = Image.new("RGB", (sum(w for w, _ in elements) + 2 * quiet, height + 2 * quiet), "white")
    x = quiet
    for width, bar in elements:
        if bar:
            image.paste((0, 0, 0), (x, quiet, x + width, quiet + height))
        x += width
    return image


def data_url(image: Image.Image) -> str:
    buffer = io.BytesIO()
    image.save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


# A camera for the page: a canvas showing the label of window.showLabel(url), as a MediaStream.
FAKE_CAMERA = """() => {
  const canvas = document.createElement("canvas");
  canvas.width = 700; canvas.height = 260;
  const pen = canvas.getContext("2d");
  let label = null;
  const paint = () => {
    pen.fillStyle = "#fff"; pen.fillRect(0, 0, canvas.width, canvas.height);
    if (label) { pen.drawImage(label, 10, 10); }
  };
  setInterval(paint, 100);  // a stream of a canvas carries a frame each time it is painted
  window.showLabel = (url) => new Promise((resolve) => {
    const image = new Image();
    image.onload = () => { label = image; paint(); resolve(true); };
    image.src = url;
  });
  navigator.mediaDevices.getUserMedia = async () => canvas.captureStream(10);
  return true;
}"""
