#version 450
// Every draw of the demo: a mesh (position, uv) transformed by its own uniform block.
layout(location = 0) in vec3 pos;
layout(location = 1) in vec2 uv;
layout(set = 0, binding = 0) uniform Draw { mat4 mvp; vec4 color; vec4 uvx; } u;
layout(location = 0) out vec2 t;
layout(location = 1) out vec4 c;
void main() {
    gl_Position = u.mvp * vec4(pos, 1.0);
    t = uv * u.uvx.xy + u.uvx.zw;
    c = u.color;
}
