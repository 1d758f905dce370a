import { rgbPng } from '../../services/simulator/door-photo.js'

// A real PNG (no image library; the simulator's own encoder): what a phone camera's photo stands
// for in the delivery tests, small enough to send many times and decodable by a browser.

/** A `width`×`height` RGB PNG: a parcel-brown square on a green doorstep, so a screenshot shows it. */
export function pngPhoto(width = 96, height = 72): Buffer {
  return rgbPng(width, height, (x, y) => (x > width / 4 && x < (width * 3) / 4 && y > height / 4 && y < (height * 3) / 4 ? [176, 124, 72] : [74, 140, 84]))
}
