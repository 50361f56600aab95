// swagger-ui-dist ships no types. Its documented way to find its files from Node: the folder they are in.
declare module 'swagger-ui-dist/absolute-path.js' {
  const getAbsoluteFSPath: () => string;
  export default getAbsoluteFSPath;
}
