import { deflateSync } from 'node:zlib'

// The photo a simulated rider takes at the door (DESIGN 14: JPEG or PNG by its bytes, ≤ 5 MB): a
// real PNG, made here rather than read from a file, so the simulator needs nothing beside its code.

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1
  return c >>> 0
})

function crc32(bytes: Buffer): number {
  let c = 0xffffffff
  for (const byte of bytes) c = CRC_TABLE[(c ^ byte) & 0xff]! ^ (c >>> 8)
  return (c ^ 0xffffffff) >>> 0
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const typed = Buffer.concat([Buffer.from(type, 'ascii'), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(typed))
  return Buffer.concat([length, typed, crc])
}

/** A `width`×`height` 8-bit RGB PNG, each pixel's colour from `colourAt`. */
export function rgbPng(width: number, height: number, colourAt: (x: number, y: number) => readonly [number, number, number]): Buffer {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header.set([8, 2, 0, 0, 0], 8) // bit depth 8, colour type RGB, deflate, no filter method, no interlace
  const rows: Buffer[] = []
  for (let y = 0; y < height; y++) {
    // Each row: filter type 0, then its pixels.
    const row = Buffer.alloc(1 + width * 3)
    for (let x = 0; x < width; x++) row.set(colourAt(x, y), 1 + x * 3)
    rows.push(row)
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), chunk('IHDR', header), chunk('IDAT', deflateSync(Buffer.concat(rows))), chunk('IEND', Buffer.alloc(0))])
}

/** A `size`×`size` PNG of one colour: a few dozen bytes. */
export function doorPhoto(size = 8, colour: readonly [number, number, number] = [0x8a, 0x5a, 0x2b]): Buffer {
  return rgbPng(size, size, () => colour)
}
