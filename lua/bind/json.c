/* lua/bind/json.c -- al.json.encode / al.json.decode over cJSON.
 * Tables with keys 1..n (n >= 1) encode as arrays, other tables as objects (keys
 * turned into strings); al.json.null stands for JSON null; NaN and infinities encode
 * as null (JSON has no spelling for them). Integers stay integers; other numbers
 * print with 17 significant digits when 15 would not round-trip. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cJSON.h>

#include "bind.h"

static char null_sentinel;

static int is_array(lua_State *L, int idx, lua_Integer *len) {
  lua_Integer n = 0, count = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    lua_pop(L, 1);
    count++;
    if (!lua_isinteger(L, -1)) { lua_pop(L, 1); return 0; }
    lua_Integer k = lua_tointeger(L, -1);
    if (k < 1) { lua_pop(L, 1); return 0; }
    if (k > n) n = k;
  }
  *len = n;
  return count > 0 && n == count;
}

static cJSON *encode(lua_State *L, int idx, int depth, const char **err) {
  if (depth > 100) { *err = "nested too deep (cycle?)"; return NULL; }
  idx = lua_absindex(L, idx);
  switch (lua_type(L, idx)) {
    case LUA_TNIL: return cJSON_CreateNull();
    case LUA_TBOOLEAN: return cJSON_CreateBool(lua_toboolean(L, idx));
    case LUA_TNUMBER: {
      double v = lua_tonumber(L, idx);
      if (!isfinite(v)) return cJSON_CreateNull();
      return cJSON_CreateNumber(v);
    }
    case LUA_TSTRING: return cJSON_CreateString(lua_tostring(L, idx));
    case LUA_TLIGHTUSERDATA:
      if (lua_touserdata(L, idx) == &null_sentinel) return cJSON_CreateNull();
      break;
    case LUA_TTABLE: {
      lua_Integer n;
      luaL_checkstack(L, 4, "json");
      if (is_array(L, idx, &n)) {
        cJSON *a = cJSON_CreateArray();
        for (lua_Integer i = 1; i <= n; i++) {
          lua_geti(L, idx, i);
          cJSON *v = encode(L, -1, depth + 1, err);
          lua_pop(L, 1);
          if (!v) { cJSON_Delete(a); return NULL; }
          cJSON_AddItemToArray(a, v);
        }
        return a;
      }
      cJSON *o = cJSON_CreateObject();
      /* sorted keys make files diffable and deterministic */
      lua_newtable(L);
      int keys = lua_gettop(L);
      int nk = 0;
      lua_pushnil(L);
      while (lua_next(L, idx)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        if (lua_type(L, -1) == LUA_TNUMBER) {
          lua_pushstring(L, lua_tostring(L, -1));
          lua_remove(L, -2);
        } else if (lua_type(L, -1) != LUA_TSTRING) {
          lua_pop(L, 2);
          lua_pop(L, 1);
          cJSON_Delete(o);
          *err = "object keys must be strings or numbers";
          return NULL;
        }
        lua_rawseti(L, keys, ++nk);
      }
      lua_getglobal(L, "table");
      lua_getfield(L, -1, "sort");
      lua_pushvalue(L, keys);
      lua_call(L, 1, 0);
      lua_pop(L, 1);
      for (int i = 1; i <= nk; i++) {
        lua_rawgeti(L, keys, i);
        const char *k = lua_tostring(L, -1);
        lua_getfield(L, idx, k);
        if (lua_isnil(L, -1)) { lua_pop(L, 1); lua_pushinteger(L, (lua_Integer)strtoll(k, NULL, 10)); lua_gettable(L, idx); }
        cJSON *v = encode(L, -1, depth + 1, err);
        lua_pop(L, 1);
        if (!v) { lua_pop(L, 2); cJSON_Delete(o); return NULL; }
        cJSON_AddItemToObject(o, k, v);
        lua_pop(L, 1);
      }
      lua_pop(L, 1);
      return o;
    }
    default: break;
  }
  *err = lua_pushfstring(L, "cannot encode a %s", luaL_typename(L, idx));
  lua_pop(L, 1);
  return NULL;
}

static int l_encode(lua_State *L) {
  const char *err = "encoding failed";
  int pretty = lua_toboolean(L, 2);
  lua_settop(L, 1);
  cJSON *j = encode(L, 1, 0, &err);
  if (!j) return luaL_error(L, "attnlab.json.encode: %s", err);
  char *s = pretty ? cJSON_Print(j) : cJSON_PrintUnformatted(j);
  cJSON_Delete(j);
  if (!s) return luaL_error(L, "attnlab.json.encode: out of memory");
  lua_pushstring(L, s);
  cJSON_free(s);
  return 1;
}

static void decode(lua_State *L, const cJSON *j, int depth) {
  luaL_checkstack(L, 4, "json too deep");
  if (cJSON_IsNull(j)) lua_pushlightuserdata(L, &null_sentinel);
  else if (cJSON_IsFalse(j)) lua_pushboolean(L, 0);
  else if (cJSON_IsTrue(j)) lua_pushboolean(L, 1);
  else if (cJSON_IsNumber(j)) {
    double v = j->valuedouble;
    if (v == floor(v) && fabs(v) < 9007199254740992.0) lua_pushinteger(L, (lua_Integer)v);
    else lua_pushnumber(L, v);
  } else if (cJSON_IsString(j)) lua_pushstring(L, j->valuestring);
  else if (cJSON_IsArray(j)) {
    lua_newtable(L);
    lua_Integer i = 1;
    for (const cJSON *c = j->child; c; c = c->next) { decode(L, c, depth + 1); lua_rawseti(L, -2, i++); }
  } else if (cJSON_IsObject(j)) {
    lua_newtable(L);
    for (const cJSON *c = j->child; c; c = c->next) { decode(L, c, depth + 1); lua_setfield(L, -2, c->string ? c->string : ""); }
  } else lua_pushnil(L);
}

static int l_decode(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  const char *end = NULL;
  cJSON *j = cJSON_ParseWithLengthOpts(s, n, &end, 0);
  if (!j) {
    const char *at = cJSON_GetErrorPtr();
    size_t pos = at && at >= s && at <= s + n ? (size_t)(at - s) : 0;
    /* line/column of the failure for humans */
    int line = 1, col = 1;
    for (size_t i = 0; i < pos; i++) { if (s[i] == '\n') { line++; col = 1; } else col++; }
    return luaL_error(L, "attnlab.json.decode: invalid JSON at line %d, column %d (byte %d)", line, col, (int)pos + 1);
  }
  /* only whitespace may follow the value */
  if (end) for (; end < s + n; end++) if (!strchr(" \t\r\n", *end)) { cJSON_Delete(j); return luaL_error(L, "attnlab.json.decode: trailing characters after the JSON value (byte %d)", (int)(end - s) + 1); }
  decode(L, j, 0);
  cJSON_Delete(j);
  return 1;
}

void l_open_json(lua_State *L) {
  lua_createtable(L, 0, 3);
  lua_pushcfunction(L, l_encode);
  lua_setfield(L, -2, "encode");
  lua_pushcfunction(L, l_decode);
  lua_setfield(L, -2, "decode");
  lua_pushlightuserdata(L, &null_sentinel);
  lua_setfield(L, -2, "null");
  lua_setfield(L, -2, "json");
}
