export { createLinuxDesktop, type LinuxDesktopOptions } from './linux-desktop';
export { checkDesktop, type LinuxDesktopEnv, type CheckOptions } from './check-desktop';
export {
  nutInput,
  pressWithModifiers,
  type KeyboardDriver,
  type NutInput,
  type NutInputOptions,
} from './input/nut.input';
