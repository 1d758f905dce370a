import type { Point } from '../courier.js'

/** A state (or the FCT), placed at its capital; `names` are how addresses mention it. */
export interface StatePlace {
  state: string
  names: string[]
  at: Point
}

/** A district of a large city, tied to its state so a separately given state can narrow the search. */
export interface DistrictPlace {
  state: string
  names: string[]
  at: Point
}

const p = (lat: number, lng: number): Point => ({ lat, lng })

// Capitals stand for their states: a parcel for "Kano" goes to Kano city, not the geographic centre.
export const STATES: StatePlace[] = [
  { state: 'Abia', names: ['abia', 'umuahia'], at: p(5.5250, 7.4940) },
  { state: 'Adamawa', names: ['adamawa', 'yola'], at: p(9.2035, 12.4954) },
  { state: 'Akwa Ibom', names: ['akwa ibom', 'uyo'], at: p(5.0377, 7.9128) },
  { state: 'Anambra', names: ['anambra', 'awka'], at: p(6.2100, 7.0700) },
  { state: 'Bauchi', names: ['bauchi'], at: p(10.3158, 9.8442) },
  { state: 'Bayelsa', names: ['bayelsa', 'yenagoa'], at: p(4.9267, 6.2676) },
  { state: 'Benue', names: ['benue', 'makurdi'], at: p(7.7337, 8.5214) },
  { state: 'Borno', names: ['borno', 'maiduguri'], at: p(11.8311, 13.1510) },
  { state: 'Cross River', names: ['cross river', 'calabar'], at: p(4.9757, 8.3417) },
  { state: 'Delta', names: ['delta', 'asaba'], at: p(6.1980, 6.7319) },
  { state: 'Ebonyi', names: ['ebonyi', 'abakaliki'], at: p(6.3249, 8.1137) },
  { state: 'Edo', names: ['edo', 'benin city'], at: p(6.3350, 5.6037) },
  { state: 'Ekiti', names: ['ekiti', 'ado ekiti'], at: p(7.6211, 5.2214) },
  { state: 'Enugu', names: ['enugu'], at: p(6.4584, 7.5464) },
  { state: 'FCT', names: ['fct', 'federal capital territory', 'abuja'], at: p(9.0579, 7.4951) },
  { state: 'Gombe', names: ['gombe'], at: p(10.2897, 11.1673) },
  { state: 'Imo', names: ['imo', 'owerri'], at: p(5.4836, 7.0333) },
  { state: 'Jigawa', names: ['jigawa', 'dutse'], at: p(11.7562, 9.3389) },
  { state: 'Kaduna', names: ['kaduna'], at: p(10.5105, 7.4165) },
  { state: 'Kano', names: ['kano'], at: p(12.0022, 8.5920) },
  { state: 'Katsina', names: ['katsina'], at: p(12.9908, 7.6018) },
  { state: 'Kebbi', names: ['kebbi', 'birnin kebbi'], at: p(12.4539, 4.1975) },
  { state: 'Kogi', names: ['kogi', 'lokoja'], at: p(7.8023, 6.7333) },
  { state: 'Kwara', names: ['kwara', 'ilorin'], at: p(8.4966, 4.5421) },
  { state: 'Lagos', names: ['lagos'], at: p(6.6018, 3.3515) },
  { state: 'Nasarawa', names: ['nasarawa', 'lafia'], at: p(8.4939, 8.5153) },
  { state: 'Niger', names: ['niger', 'minna'], at: p(9.6139, 6.5569) },
  { state: 'Ogun', names: ['ogun', 'abeokuta'], at: p(7.1475, 3.3619) },
  { state: 'Ondo', names: ['ondo', 'akure'], at: p(7.2571, 5.2058) },
  { state: 'Osun', names: ['osun', 'osogbo', 'oshogbo'], at: p(7.7827, 4.5418) },
  { state: 'Oyo', names: ['oyo', 'ibadan'], at: p(7.3775, 3.9470) },
  { state: 'Plateau', names: ['plateau', 'jos'], at: p(9.8965, 8.8583) },
  { state: 'Rivers', names: ['rivers', 'port harcourt', 'portharcourt', 'ph'], at: p(4.8156, 7.0498) },
  { state: 'Sokoto', names: ['sokoto'], at: p(13.0059, 5.2476) },
  { state: 'Taraba', names: ['taraba', 'jalingo'], at: p(8.8937, 11.3596) },
  { state: 'Yobe', names: ['yobe', 'damaturu'], at: p(11.7470, 11.9608) },
  { state: 'Zamfara', names: ['zamfara', 'gusau'], at: p(12.1628, 6.6614) },
]

const lagos = (names: string[], lat: number, lng: number): DistrictPlace => ({ state: 'Lagos', names, at: p(lat, lng) })
const abuja = (names: string[], lat: number, lng: number): DistrictPlace => ({ state: 'FCT', names, at: p(lat, lng) })
const portHarcourt = (names: string[], lat: number, lng: number): DistrictPlace => ({ state: 'Rivers', names, at: p(lat, lng) })

export const DISTRICTS: DistrictPlace[] = [
  lagos(['ikeja'], 6.6018, 3.3515),
  lagos(['ikeja gra'], 6.5780, 3.3530),
  lagos(['lekki', 'lekki phase 1'], 6.4474, 3.4736),
  lagos(['victoria island', 'v i'], 6.4281, 3.4219),
  lagos(['ikoyi'], 6.4549, 3.4366),
  lagos(['lagos island', 'isale eko'], 6.4541, 3.3947),
  lagos(['obalende'], 6.4480, 3.4080),
  lagos(['yaba'], 6.5095, 3.3711),
  lagos(['surulere'], 6.5000, 3.3500),
  lagos(['ikorodu'], 6.6194, 3.5105),
  lagos(['ajah'], 6.4698, 3.5852),
  lagos(['sangotedo'], 6.4700, 3.6300),
  lagos(['apapa'], 6.4489, 3.3590),
  lagos(['maryland'], 6.5710, 3.3670),
  lagos(['gbagada'], 6.5536, 3.3878),
  lagos(['festac', 'festac town'], 6.4658, 3.2839),
  lagos(['oshodi'], 6.5550, 3.3430),
  lagos(['agege'], 6.6180, 3.3209),
  lagos(['magodo'], 6.6186, 3.3819),
  lagos(['ogba'], 6.6296, 3.3405),
  lagos(['mushin'], 6.5273, 3.3414),
  lagos(['ebute metta', 'ebute meta'], 6.4850, 3.3800),
  lagos(['badagry'], 6.4316, 2.8876),
  lagos(['epe'], 6.5841, 3.9834),
  lagos(['ojota'], 6.5850, 3.3800),
  lagos(['ketu'], 6.5960, 3.3890),
  lagos(['ojodu'], 6.6420, 3.3690),
  lagos(['isolo'], 6.5300, 3.3200),
  lagos(['ilupeju'], 6.5530, 3.3570),
  lagos(['ojo'], 6.4600, 3.1800),
  abuja(['wuse', 'wuse 2', 'wuse ii'], 9.0765, 7.4683),
  abuja(['maitama'], 9.0882, 7.4934),
  abuja(['garki'], 9.0370, 7.4910),
  abuja(['asokoro'], 9.0437, 7.5264),
  abuja(['gwarinpa', 'gwarimpa'], 9.1099, 7.4083),
  abuja(['jabi'], 9.0697, 7.4260),
  abuja(['utako'], 9.0667, 7.4400),
  abuja(['kubwa'], 9.1540, 7.3220),
  abuja(['lugbe'], 8.9822, 7.3740),
  abuja(['central business district', 'cbd'], 9.0580, 7.4890),
  abuja(['wuye'], 9.0590, 7.4560),
  abuja(['life camp'], 9.0750, 7.4000),
  abuja(['katampe'], 9.1120, 7.4430),
  abuja(['nyanya'], 9.0260, 7.5680),
  abuja(['lokogoma'], 8.9930, 7.4620),
  abuja(['apo'], 9.0010, 7.5040),
  abuja(['durumi'], 9.0200, 7.4600),
  abuja(['gudu'], 9.0110, 7.4780),
  portHarcourt(['gra', 'old gra', 'new gra'], 4.8160, 6.9990),
  portHarcourt(['trans amadi'], 4.8080, 7.0380),
  portHarcourt(['rumuokoro'], 4.8700, 7.0000),
  portHarcourt(['diobu', 'mile 1'], 4.7870, 6.9950),
  portHarcourt(['d line'], 4.8010, 6.9990),
  portHarcourt(['borokiri'], 4.7470, 7.0330),
  portHarcourt(['eliozu'], 4.8650, 7.0550),
  portHarcourt(['rumuola'], 4.8350, 6.9980),
  portHarcourt(['rumuibekwe'], 4.8370, 7.0230),
  portHarcourt(['woji'], 4.8300, 7.0600),
  portHarcourt(['elelenwo'], 4.8380, 7.0750),
  portHarcourt(['ada george'], 4.8350, 6.9800),
  portHarcourt(['choba'], 4.8930, 6.9230),
]
