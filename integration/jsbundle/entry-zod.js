import * as zod from "zod";
zod.config(zod.locales.zhCN());
export default zod;
