// The console's cookies, by name and path: a leaf every part of the console reads. The console's
// session lives on /console and the courier app's on /courier, so neither is ever sent to the
// other's pages; each has its CSRF secret under the same name on its own path.

export const CSRF_COOKIE = 'console_csrf'
export const COURIER_COOKIE = 'courier_session'
export const COURIER_PATH = '/courier'
