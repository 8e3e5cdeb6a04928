/* lua/host/helpers.c -- the host's helpers written in Lua (kept in the registry): the
 * REPL's printer (tensors through attnlab.format), tab completion, the version and the
 * banner; and the C functions that call them. */
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>

#include "attnlab/version.h"
#include "host.h"

#define ATTNLAB_VERSION ATTNLAB_VERSION_STRING

/* Helpers written in Lua: the REPL's printer, tab completion and the banner. */
static const char HOST_LUA[] =
  "local H = {}\n"
  "local getmt, rawget, type, pcall, select = debug.getmetatable, rawget, type, pcall, select\n"
  "local unpack = table.unpack\n"
  "local format\n"
  "local function is_tensor(v)\n"
  "  local mt = getmt(v)\n"
  "  if type(mt) == 'table' and rawget(mt, '__name') == 'attnlab.Tensor' then return true end\n"
  "  local al = package.loaded['attnlab']\n"
  "  if type(v) == 'userdata' and type(al) == 'table' and type(rawget(al, 'is_tensor')) == 'function' then\n"
  "    local ok, r = pcall(al.is_tensor, v)\n"
  "    return ok and r == true\n"
  "  end\n"
  "  return false\n"
  "end\n"
  /* the REPL's printer: tensors through attnlab.format, then the global print */
  "function H.print(...)\n"
  "  local n, args = select('#', ...), { ... }\n"
  "  for i = 1, n do\n"
  "    if is_tensor(args[i]) then\n"
  "      if format == nil then\n"
  "        local ok, f = pcall(require, 'attnlab.format')\n"
  "        format = ok and f or false\n"
  "      end\n"
  "      if format then\n"
  "        local ok, s = pcall(format, args[i])\n"
  "        if ok then args[i] = s end\n"
  "      end\n"
  "    end\n"
  "  end\n"
  "  return print(unpack(args, 1, n))\n"
  "end\n"
  "local KEYWORDS = {}\n"
  "for w in ('and break do else elseif end false for function goto if in local nil not or '\n"
  "    .. 'repeat return then true until while'):gmatch('%a+') do KEYWORDS[w] = true end\n"
  /* completions of `text`: 'pri' (globals, keywords), 'al.nn.Li', 't:sha' */
  "function H.complete(text)\n"
  "  local out, seen = {}, {}\n"
  "  local head, sep, part = text:match('^(.-)([.:])([%w_]*)$')\n"
  "  if not head then part = text end\n"
  "  local function add(s)\n"
  "    if not seen[s] then seen[s] = true; out[#out + 1] = s end\n"
  "  end\n"
  "  local function wanted(k)\n"
  "    return type(k) == 'string' and k:sub(1, #part) == part and k:match('^[%a_][%w_]*$')\n"
  "       and not KEYWORDS[k] and (part:sub(1, 1) == '_' or k:sub(1, 2) ~= '__')\n"
  "  end\n"
  /* fields of tables, then of metatable __index tables (classes, string methods); when
   * __index is a function (a userdata with properties), the metatable's `methods` or
   * `__methods` table and its `__fields` list of property names, if it has them */
  "  local function collect(v, prefix, methods)\n"
  "    local visited = {}\n"
  "    local function walk(x, depth)\n"
  "      if depth > 10 or x == nil or visited[x] then return end\n"
  "      visited[x] = true\n"
  "      if type(x) == 'table' then\n"
  "        for k, val in next, x do\n"
  "          if wanted(k) and (not methods or type(val) == 'function') then\n"
  "            add(prefix .. k .. (type(val) == 'function' and '(' or ''))\n"
  "          end\n"
  "        end\n"
  "      end\n"
  "      local mt = getmt(x)\n"
  "      if type(mt) ~= 'table' then return end\n"
  "      local idx = rawget(mt, '__index')\n"
  "      if type(idx) == 'table' then walk(idx, depth + 1); return end\n"
  "      if idx == nil then return end\n"
  "      local m = rawget(mt, 'methods') or rawget(mt, '__methods')\n"
  "      walk(type(m) == 'table' and m or mt, depth + 1)\n"
  "      local f = rawget(mt, '__fields')\n"
  "      if not methods and type(f) == 'table' then\n"
  "        for _, k in ipairs(f) do if wanted(k) then add(prefix .. k) end end\n"
  "      end\n"
  "    end\n"
  "    walk(v, 0)\n"
  "  end\n"
  "  if head then\n"
  "    local v = _G\n"
  "    for name in (head .. '.'):gmatch('([^.]*)%.') do\n"
  "      if not name:match('^[%a_][%w_]*$') then return out end\n"
  "      local t = type(v)\n"
  "      if t ~= 'table' and t ~= 'userdata' and t ~= 'string' then return out end\n"
  "      local ok, nv = pcall(function() return v[name] end)\n"
  "      if not ok or nv == nil then return out end\n"
  "      v = nv\n"
  "    end\n"
  "    collect(v, head .. sep, sep == ':')\n"
  "  else\n"
  "    for w in pairs(KEYWORDS) do\n"
  "      if w:sub(1, #part) == part then add(w) end\n"
  "    end\n"
  "    collect(_G, '', false)\n"
  "  end\n"
  "  table.sort(out)\n"
  "  return out\n"
  "end\n"
  /* the version: al.VERSION, al.version or al.config().version, else the compiled default */
  "local function config()\n"
  "  local al = package.loaded['attnlab']\n"
  "  if type(al) == 'table' and type(rawget(al, 'config')) == 'function' then\n"
  "    local ok, c = pcall(al.config)\n"
  "    if ok and type(c) == 'table' then return c end\n"
  "  end\n"
  "end\n"
  "function H.version(default)\n"
  "  local al = package.loaded['attnlab']\n"
  "  if type(al) == 'table' then\n"
  "    local v = rawget(al, 'VERSION') or rawget(al, 'version')\n"
  "    if type(v) == 'string' then return v end\n"
  "  end\n"
  "  local c = config()\n"
  "  if c and type(c.version) == 'string' then return c.version end\n"
  "  return default\n"
  "end\n"
  /* banner: "attnlab V (Lua 5.4.x) -- BLAS: <backend> <core> <n> threads" + the hint line;
   * reads al.config() fields blas_backend, blas (a core name, or {name=, core=}), blas_core,
   * threads -- whichever are there */
  "function H.banner(version, lua_release)\n"
  "  local s = ('attnlab %s (%s)'):format(version, lua_release)\n"
  "  local c = config()\n"
  "  if c then\n"
  "    local parts = {}\n"
  "    local function add(v) if type(v) == 'string' and v ~= '' then parts[#parts + 1] = v end end\n"
  "    add(c.blas_backend)\n"
  "    if type(c.blas) == 'table' then add(c.blas.name); add(c.blas.core) else add(c.blas) end\n"
  "    add(c.blas_core)\n"
  "    local th = c.threads or c.num_threads\n"
  "    s = s .. ' -- BLAS: ' .. (#parts > 0 and table.concat(parts, ' ') or 'unknown')\n"
  "    if th ~= nil then s = s .. ', ' .. tostring(th) .. ' threads' end\n"
  "  end\n"
  "  return s .. '\\nal.<tab> completes; help: al.help()'\n"
  "end\n"
  "return H\n";

static const char *HOST_KEY = "attnlab.host"; /* registry field holding the helper table */

void host_load_helpers(lua_State *L) {
  if (luaL_loadbuffer(L, HOST_LUA, sizeof HOST_LUA - 1, "=attnlab.host") == LUA_OK &&
      lua_pcall(L, 0, 1, 0) == LUA_OK) {
    lua_setfield(L, LUA_REGISTRYINDEX, HOST_KEY);
  } else {
    host_message(HOST_NAME, lua_tostring(L, -1)); /* cannot happen unless out of memory */
    lua_pop(L, 1);
  }
}

/* Pushes the helper `name` (a function) or returns 0 with nothing pushed. */
int host_push_helper(lua_State *L, const char *name) {
  if (lua_getfield(L, LUA_REGISTRYINDEX, HOST_KEY) != LUA_TTABLE) { lua_pop(L, 1); return 0; }
  if (lua_getfield(L, -1, name) != LUA_TFUNCTION) { lua_pop(L, 2); return 0; }
  lua_remove(L, -2);
  return 1;
}

/* The version shown by -v and the banner (see H.version). Pushes values: the caller
 * restores the stack top once it is done with the string. */
static const char *version_string(lua_State *L) {
  if (host_push_helper(L, "version")) {
    lua_pushliteral(L, ATTNLAB_VERSION);
    if (lua_pcall(L, 1, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING)
      return lua_tostring(L, -1);
  }
  return ATTNLAB_VERSION;
}

void host_print_version(lua_State *L) {
  int top = lua_gettop(L);
  printf("%s %s (%s)\n", HOST_NAME, version_string(L), LUA_RELEASE);
  fflush(stdout);
  lua_settop(L, top);
}

void host_print_banner(lua_State *L) {
  int top = lua_gettop(L);
  const char *version = version_string(L);
  if (host_push_helper(L, "banner")) {
    lua_pushstring(L, version);
    lua_pushstring(L, LUA_RELEASE);
    if (lua_pcall(L, 2, 1, 0) == LUA_OK && lua_type(L, -1) == LUA_TSTRING) {
      printf("%s\n", lua_tostring(L, -1));
      fflush(stdout);
      lua_settop(L, top);
      return;
    }
  }
  lua_settop(L, top);
  host_print_version(L);
}
