(function(){
  var boxes=[].slice.call(document.querySelectorAll('#filters input[type=checkbox]'));
  var text=document.getElementById('q');
  var shown=document.getElementById('shown');
  var cases=[].slice.call(document.querySelectorAll('.case'));
  function apply(){
    var on={};boxes.forEach(function(b){on[b.value]=b.checked;});
    var q=text.value.trim().toLowerCase();var n=0;
    cases.forEach(function(c){
      var ok=on[c.dataset.verdict]&&(!q||c.dataset.text.indexOf(q)>=0);
      c.classList.toggle('hidden',!ok);if(ok)n++;
    });
    document.querySelectorAll('section.group').forEach(function(g){
      var any=g.querySelector('.case:not(.hidden)');g.classList.toggle('hidden',!any);
      var d=g.querySelector('details.fold');if(d&&q&&any)d.open=true;
    });
    shown.textContent=n+' of '+cases.length+' cases shown';
  }
  boxes.forEach(function(b){b.addEventListener('change',apply);});
  text.addEventListener('input',apply);
  document.querySelectorAll('.chip[data-only]').forEach(function(a){
    a.addEventListener('click',function(e){
      e.preventDefault();var v=a.dataset.only;
      boxes.forEach(function(b){b.checked=(b.value===v);});
      var g=document.getElementById('g-'+v);var d=g&&g.querySelector('details.fold');if(d)d.open=true;
      apply();if(g)g.scrollIntoView();
    });
  });
  function openTarget(){
    var id=decodeURIComponent(location.hash.slice(1));var el=id&&document.getElementById(id);
    if(!el)return;var d=el.closest('details.fold');if(d)d.open=true;
    if(el.classList.contains('hidden')){boxes.forEach(function(b){b.checked=true;});text.value='';apply();}
    el.scrollIntoView();
  }
  window.addEventListener('hashchange',openTarget);openTarget();
  document.querySelectorAll('button.copy').forEach(function(b){
    b.addEventListener('click',function(){
      var from=document.getElementById(b.dataset.copy);var s=from.textContent;
      function done(){b.textContent='copied';setTimeout(function(){b.textContent='copy';},1500);}
      function fallback(){var t=document.createElement('textarea');t.value=s;document.body.appendChild(t);t.select();
        try{document.execCommand('copy');done();}catch(e){}document.body.removeChild(t);}
      if(navigator.clipboard&&navigator.clipboard.writeText){navigator.clipboard.writeText(s).then(done,fallback);}else{fallback();}
    });
  });
  apply();
})();
