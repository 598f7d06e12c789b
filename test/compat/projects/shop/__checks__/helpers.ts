export const HOME_TITLE = 'Shop'
